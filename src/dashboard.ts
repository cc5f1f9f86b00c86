import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Logger } from '@nestjs/common';

/** The project root, whether this file runs from src/ (ts-node, tests) or from dist/src/ (the build). */
const PROJECT_ROOT =
  basename(dirname(__dirname)) === 'dist' ? join(__dirname, '..', '..') : join(__dirname, '..');

/** The dashboard's build (`npm run build:web`), the same folder from src/ (tests) and dist/src/ (the build). */
export const DASHBOARD_ROOT = join(PROJECT_ROOT, 'dist', 'web');

/**
 * Serves the dashboard at `/` from dist/web: hashed assets cached for a year, index.html revalidated
 * on every load so a deploy shows at once. No second server to run.
 */
export function serveDashboard(app: NestFastifyApplication): void {
  if (!existsSync(join(DASHBOARD_ROOT, 'index.html'))) {
    new Logger('Dashboard').warn(
      `no dashboard build in ${DASHBOARD_ROOT}: run \`npm run build\` to serve it at /`,
    );
    return;
  }
  app.useStaticAssets({
    root: DASHBOARD_ROOT,
    prefix: '/',
    wildcard: false,
    setHeaders: (response, path) => {
      const hashed = path.startsWith(join(DASHBOARD_ROOT, 'assets'));
      const value = hashed ? 'public, max-age=31536000, immutable' : 'no-cache';
      // @fastify/static 10 passes the Fastify reply, though its typings still name a raw response.
      if ('header' in response && typeof response.header === 'function')
        response.header('cache-control', value);
    },
  });
}
