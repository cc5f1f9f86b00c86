#!/usr/bin/env node
// Runs the build when dist/ is missing or older than the sources: after `npm install` (the `prepare`
// script, so `npm start` answers at once) and before `npm start`, so a fresh clone just works.
const { existsSync, statSync, readdirSync } = require('node:fs');
const { join } = require('node:path');
const { execSync } = require('node:child_process');

const root = join(__dirname, '..');
const entry = join(root, 'dist', 'src', 'main.js');
const page = join(root, 'dist', 'web', 'index.html');

function newestMtime(dir) {
  let newest = 0;
  for (const entryName of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entryName.name);
    const mtime = entryName.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    newest = Math.max(newest, mtime);
  }
  return newest;
}

// A production image has only dist/: nothing to build from.
if (!existsSync(join(root, 'src'))) process.exit(0);
const sourcesMtime = Math.max(newestMtime(join(root, 'src')), newestMtime(join(root, 'web')));
const stale = !existsSync(entry) || !existsSync(page) || statSync(entry).mtimeMs < sourcesMtime;
if (stale) {
  console.log('Building Hooktrail (dist/ is missing or older than the sources)...');
  execSync('npm run build', { cwd: root, stdio: 'inherit' });
}
