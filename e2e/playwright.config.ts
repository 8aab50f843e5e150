import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './lib/browser';

// One worker: the machine has two cores, and each test runs a server, a browser and video.
export default defineConfig({
  testDir: './tests',
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 180_000,
  reporter: [['list']],
  outputDir: './test-results',
  use: {
    launchOptions: chromiumLaunchOptions(),
    viewport: { width: 1280, height: 900 },
    trace: 'off',
  },
});
