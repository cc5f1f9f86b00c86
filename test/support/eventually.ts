import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `read` every 100 ms until `done` holds of its value, or fails after `timeoutMs` with the last value seen. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await sleep(100);
  }
}
