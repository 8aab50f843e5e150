import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './lib/browser';

// The dashboard performance benchmark (not part of the test suite: it runs ~10 minutes).
// PCCSTREAM_BENCH_SECONDS (default 600) and PCCSTREAM_BENCH_MEDIA (default
// .cache/media-bench-600, made by `pccstream media synth --duration 600`).
export default defineConfig({
  testDir: './bench',
  testMatch: /.*\.bench\.ts/,
  workers: 1,
  retries: 0,
  timeout: 3_600_000,
  reporter: [['list']],
  outputDir: './test-results/bench',
  use: {
    launchOptions: chromiumLaunchOptions(),
    viewport: { width: 1280, height: 1400 },
    trace: 'off',
  },
});
