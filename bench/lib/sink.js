// The HTTPS destination of the benchmark, run as a child process of bench/run.js (so that its TLS work
// does not share an event loop with the load generator). It answers every request 200 at once and
// counts them: by `hooktrail-id` (delivery id; a repeat is a duplicate delivery), by phase (set by the
// parent; with the arrivals in each whole second of the clock), and the first arrival of each
// `"bench_seq":N` marker found in a body. Requests to /hang (never answered) and /slow (answered after 2 s)
// are only counted apart.
// Messages from the parent: {cmd: 'phase', name}, {cmd: 'stats'}, {cmd: 'markers'}, {cmd: 'close'};
// each gets {reply: cmd, ...} back.
const https = require('node:https');
const { performance } = require('node:perf_hooks');

const now = () => performance.timeOrigin + performance.now();
const MARKER = /"bench_seq":(\d+)/;

const byDelivery = new Map();
const markers = new Map();
const phases = new Map();
let phase = phaseStats('setup');
let total = 0;
let duplicates = 0;
let connections = 0;
let noisy = 0;

function phaseStats(name) {
  const stats = { name, count: 0, first: null, last: null, perSecond: {} };
  phases.set(name, stats);
  return stats;
}

const server = https.createServer(
  { cert: process.env.SINK_CERT, key: process.env.SINK_KEY, keepAliveTimeout: 30_000 },
  (request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      // The noisy destinations of scenario 6, counted apart: /hang never answers, /slow after 2 s.
      if (request.url.startsWith('/hang') || request.url.startsWith('/slow')) {
        noisy += 1;
        if (request.url.startsWith('/slow')) setTimeout(() => response.end('ok'), 2000);
        return;
      }
      const at = now();
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
      response.end('ok');
      total += 1;
      phase.count += 1;
      phase.first ??= at;
      phase.last = at;
      const second = Math.floor(at / 1000);
      phase.perSecond[second] = (phase.perSecond[second] ?? 0) + 1;
      const id = request.headers['hooktrail-id'];
      if (id !== undefined) {
        const seen = byDelivery.get(id) ?? 0;
        if (seen > 0) duplicates += 1;
        byDelivery.set(id, seen + 1);
      }
      const marker = MARKER.exec(Buffer.concat(chunks).toString('utf8'));
      if (marker && !markers.has(Number(marker[1]))) markers.set(Number(marker[1]), at);
    });
  },
);
server.headersTimeout = 60_000;
server.on('secureConnection', () => {
  connections += 1;
});

process.on('message', (message) => {
  switch (message.cmd) {
    case 'phase':
      phase = phases.get(message.name) ?? phaseStats(message.name);
      process.send({ reply: 'phase' });
      break;
    case 'stats':
      process.send({
        reply: 'stats',
        total,
        unique: byDelivery.size,
        duplicates,
        connections,
        noisy,
        phases: Object.fromEntries(phases),
      });
      break;
    case 'markers':
      process.send({ reply: 'markers', markers: [...markers.entries()] });
      break;
    case 'close':
      server.closeAllConnections();
      server.close(() => process.exit(0));
      break;
  }
});
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => process.send({ reply: 'ready', port: server.address().port }));
