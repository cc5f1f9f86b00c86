#!/usr/bin/env node
// Reads a V8 CPU profile (node --cpu-prof; `BENCH_CPU_PROF=1 npm run bench` writes one of the service to
// bench/results/profiles) and prints where the time went: by package or area, then the top functions by
// self time.   node bench/profile-top.js bench/results/profiles/<file>.cpuprofile [count]
const { readFileSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

function latestProfile() {
  const dir = join(__dirname, 'results', 'profiles');
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => ({ name, mtime: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}`);
  return join(dir, files[0].name);
}

/** Where a function comes from: an npm package, Node's internals, the service's code, or V8 itself. */
function areaOf(url, functionName) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const packages = url.lastIndexOf('node_modules/');
  if (packages !== -1) {
    const rest = url.slice(packages + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const source = /\/dist\/src\/(.+)$/.exec(url);
  return source ? `hooktrail ${source[1].split('/')[0]}` : url;
}

const file = process.argv[2] ?? latestProfile();
const top = Number(process.argv[3] ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const sampleMs = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples.length);
const selfByFunction = new Map();
const selfByArea = new Map();
let total = 0;
let idle = 0;
for (const node of profile.nodes) {
  const { functionName, url, lineNumber } = node.callFrame;
  const ms = (node.hitCount ?? 0) * sampleMs;
  if (functionName === '(idle)') {
    idle += ms;
    continue;
  }
  total += ms;
  const name = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/')}:${lineNumber + 1}` : ''}`;
  selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + ms);
  const area = areaOf(url, functionName);
  selfByArea.set(area, (selfByArea.get(area) ?? 0) + ms);
}
const print = (title, map, count) => {
  console.log(`\n${title}`);
  for (const [name, ms] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, count)) {
    console.log(
      `${((ms / total) * 100).toFixed(1).padStart(5)} %  ${(ms / 1000).toFixed(1).padStart(7)} s  ${name}`,
    );
  }
};
console.log(
  `${file}: ${(total / 1000).toFixed(1)} s busy (percentages of it), ${(idle / 1000).toFixed(1)} s idle`,
);
print('self time by area', selfByArea, 20);
print(`top ${top} functions by self time`, selfByFunction, top);
