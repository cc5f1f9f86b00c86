#!/usr/bin/env node
// The providers of the fault tests: an open-loop load generator in a process of its own, so that it never
// shares an event loop (or a CPU budget) with the service under test. It takes one IPC message
// {url, ratePerS, total, timeoutMs, bodyTemplate}, sends `total` POSTs at `ratePerS`, each on its own
// schedule whatever the previous ones are doing (a stalled service does not slow the sender down), gives each
// `timeoutMs` to answer, and sends back one message {results}. "%n" in the body is the request's index.
// A "stop" message ends the sending early; the requests already sent are still awaited.
const http = require('node:http');

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

function sendOne(url, body, timeoutMs) {
  const sentAt = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, sentAt, durationMs: Date.now() - sentAt });
    };
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('error', (error) => finish({ status: 0, error: error.message }));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode !== 200)
            return finish({
              status: response.statusCode,
              error: text,
              retryAfter: response.headers['retry-after'],
            });
          let id;
          try {
            id = JSON.parse(text).id;
          } catch {
            // not JSON: no id, so it counts as not acknowledged
          }
          finish({ status: 200, id });
        });
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ status: 0, error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    request.on('error', (error) => finish({ status: 0, error: error.code ?? error.message }));
    request.end(body);
  });
}

async function run({ url, ratePerS, total, timeoutMs, bodyTemplate }) {
  let stopped = false;
  process.on('message', (message) => {
    if (message === 'stop') stopped = true;
  });
  const started = Date.now();
  const inFlight = [];
  for (let n = 0; n < total && !stopped; n++) {
    const wait = started + (n * 1000) / ratePerS - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(sendOne(url, bodyTemplate.replaceAll('%n', String(n)), timeoutMs));
  }
  const results = await Promise.all(inFlight);
  process.send({ results }, () => process.exit(0));
}

process.once('message', (config) => {
  run(config).catch((error) => {
    console.error(error);
    process.exit(1);
  });
});
