import type { LaunchOptions } from '@playwright/test';

/** Debian's Chromium; browsers are never downloaded here. */
export const CHROMIUM = process.env.PCCSTREAM_CHROMIUM ?? '/usr/bin/chromium';

export function chromiumLaunchOptions(extraArgs: string[] = []): LaunchOptions {
  return {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--autoplay-policy=no-user-gesture-required',
      ...extraArgs,
    ],
  };
}
