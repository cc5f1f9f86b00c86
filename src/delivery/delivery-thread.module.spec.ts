import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Metrics } from '../metrics/metrics.service';
import { DeliveryThread } from './delivery-thread.module';

/**
 * A stand-in for dist/src/delivery-thread.js that speaks the same messages: it appends a line to STARTS
 * each time it starts, says it is ready, answers metrics requests with one figure, closes when asked, and
 * the first time it runs stops by itself (exit code 3) shortly after it was ready.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { appendFileSync, readFileSync } = require('node:fs');
const starts = workerData.variables.STARTS;
appendFileSync(starts, 'started\\n');
parentPort.on('message', (message) => {
  if (message.type === 'metrics') parentPort.postMessage({ type: 'metrics', id: message.id, metrics: [{ name: 'from_thread' }] });
  else process.exit(0);
});
parentPort.postMessage({ type: 'ready' });
if (readFileSync(starts, 'utf8').split('\\n').length === 2) setTimeout(() => process.exit(3), 50);
`;

describe('DeliveryThread', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'delivery-thread-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('starts the thread again when it stops by itself, and closes it with the application', async () => {
    const entry = join(dir, 'thread.js');
    const starts = join(dir, 'starts');
    writeFileSync(entry, THREAD);
    const sources: (() => Promise<unknown[]>)[] = [];
    const metrics = { addSource: (source: () => Promise<unknown[]>) => sources.push(source) };
    const thread = new DeliveryThread(
      { entry, variables: { STARTS: starts } },
      metrics as unknown as Metrics,
    );
    const startCount = () => readFileSync(starts, 'utf8').trim().split('\n').length;

    await thread.onApplicationBootstrap();
    expect(startCount()).toBe(1);
    // The first thread exits with code 3; a second one is started after a pause and answers for its figures.
    while (startCount() < 2) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await sources[0]()).toEqual([{ name: 'from_thread' }]);
    await thread.onApplicationShutdown();
    expect(startCount()).toBe(2);
  });
});
