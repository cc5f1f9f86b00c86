import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// The dashboard: built from web/ into dist/web, which the API serves at `/`.
// `vite --config web/vite.config.ts` (dev) proxies the API to the backend on BACKEND_URL (default :3000).
const backend = process.env.BACKEND_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2020',
    sourcemap: false,
  },
  server: {
    proxy: {
      '/api': { target: backend, changeOrigin: false },
      '/in': { target: backend, changeOrigin: false },
    },
  },
  preview: { port: 4173 },
});
