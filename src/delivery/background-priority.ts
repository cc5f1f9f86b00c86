import { constants, setPriority } from 'node:os';

/**
 * Lowers the CPU priority of the calling thread (nice 10): forwarding is background work, answering a
 * capture is not. On a box whose CPU is short, the scheduler then runs the HTTP loop that accepts and answers
 * captures first and gives deliveries what is left; with CPU to spare, nothing changes. On Linux the
 * priority is the calling thread's alone, so the delivery thread of an APP_ROLE=all process can be lowered
 * without the main thread; a worker process (APP_ROLE=worker) lowers itself likewise.
 */
export function runAsBackgroundWork(): void {
  setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
}
