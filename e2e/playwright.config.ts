import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './lib/browser';

// One worker: the machine has two cores, and each test runs a server, a browser and video.
export default defineConfig({
  testDir: './tests',
  workers: 1,
  fullyParallel: false,
  // One retry: on a virtual machine whose CPUs are descheduled for milliseconds (the emulator's
  // timer lateness, docs/emulator.md) a live test at a 300 ms playout delay can stall for the
  // host's sake. The list reporter marks a test that passed only on its retry as flaky.
  retries: 1,
  timeout: 180_000,
  reporter: [['list']],
  outputDir: './test-results',
  use: {
    launchOptions: chromiumLaunchOptions(),
    viewport: { width: 1280, height: 900 },
    trace: 'off',
  },
});
