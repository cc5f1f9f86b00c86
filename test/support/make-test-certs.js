#!/usr/bin/env node
// Makes the self-signed certificate (its own CA) of the HTTPS destination servers the tests start on
// 127.0.0.1. `npm run test:e2e` passes it to Node through NODE_EXTRA_CA_CERTS, the way a user trusts a
// private CA. Kept in test/.certs (git-ignored) and reused while it is valid.
const { existsSync, mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const selfsigned = require('selfsigned');

const dir = join(__dirname, '..', '.certs');
if (!existsSync(join(dir, 'ca.pem')) || !existsSync(join(dir, 'key.pem'))) {
  const pems = selfsigned.generate([{ name: 'commonName', value: 'Hooktrail test destination' }], {
    days: 3650,
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'ca.pem'), pems.cert);
  writeFileSync(join(dir, 'key.pem'), pems.private);
}
