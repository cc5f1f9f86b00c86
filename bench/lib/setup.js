/* global AbortSignal */
// What bench/run.js and bench/soak-faults.js set the service up with: the sink's certificate, spare ports,
// calls to its API (and a fresh access token), and the undoing of it all at the end.
const { createServer } = require('node:net');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const selfsigned = require('selfsigned');

async function api(baseUrl, method, path, { token, body } = {}) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : undefined;
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return parsed;
}

/** An access token of the bench user made now: the soak, the seeding and the deletion outlast the first one. */
async function freshToken(context) {
  const session = await api(context.baseUrl, 'POST', '/api/auth/login', { body: context.credentials });
  return session.accessToken;
}

function makeCertificate(dir) {
  const pems = selfsigned.generate([{ name: 'commonName', value: 'Hooktrail bench sink' }], {
    days: 2,
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, pems.cert);
  return { cert: pems.cert, key: pems.private, caFile };
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs the undo steps of a run, newest first, each bounded to 30 s; a failing step does not stop the rest. */
async function runCleanups(cleanups) {
  while (cleanups.length > 0) {
    const step = cleanups.pop();
    try {
      await Promise.race([step(), sleep(30_000)]);
    } catch (error) {
      console.error(`cleanup step failed: ${error.message}`);
    }
  }
}

module.exports = { api, freshToken, makeCertificate, freePort, runCleanups };
