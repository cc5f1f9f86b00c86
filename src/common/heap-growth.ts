import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets a heap grow past what its last full collection kept, in percent. Left to itself, V8
 * grows the old generation of a process that allocates fast (as a busy capture URL does) up to four times
 * its live size before collecting it: about 250 MB of garbage on the event loop that answers captures, as
 * much again on the delivery thread. 50 % keeps the busy service near its live size at no throughput
 * measured (BENCHMARKS.md). It is a growth factor, not a limit: a process that really holds more (a page
 * of large bodies) grows as it must, and never crashes for it.
 */
export const HEAP_GROWING_PERCENT = 50;

/** Applies HEAP_GROWING_PERCENT to every heap of the process, unless node was given its own. */
export function limitHeapGrowth(execArgv: string[] = process.execArgv): void {
  if (execArgv.some((argument) => /^--heap[-_]growing[-_]percent\b/.test(argument))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
