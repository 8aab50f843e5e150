import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The Python server serves web/dist/ and answers GET /api/config. For `npm run dev`,
// PCCSTREAM_HTTP (default http://127.0.0.1:8080) is where that server listens.
const apiTarget = process.env['PCCSTREAM_HTTP'] ?? 'http://127.0.0.1:8080';

export default defineConfig({
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    rollupOptions: {
      input: {
        main: fileURLToPath(new URL('./index.html', import.meta.url)),
        compare: fileURLToPath(new URL('./compare.html', import.meta.url)),
        // The WebRTC reference arm (docs/webrtc.md).
        webrtcSend: fileURLToPath(new URL('./webrtc-send.html', import.meta.url)),
        webrtcRecv: fileURLToPath(new URL('./webrtc-recv.html', import.meta.url)),
      },
    },
  },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': apiTarget },
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
    // Two cores are shared with other engineers: a single worker keeps the run fast and quiet.
    maxWorkers: 1,
  },
});
