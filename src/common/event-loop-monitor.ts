import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/** How often the delay is read (and listeners told): short enough to react within a few tenths of a second. */
const WINDOW_MS = 100;
/** Resolution of the sampling timer of the histogram. */
const RESOLUTION_MS = 10;

/**
 * How late this process's event loop runs: every WINDOW_MS, the longest delay its timers saw in that window.
 * A loop that is late answers every socket late, the capture URL's included; the delivery engine listens
 * and slows down its own work (ConcurrencyWindow) so that it never starves the HTTP path of its process.
 */
@Injectable()
export class EventLoopMonitor implements OnModuleDestroy {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private readonly listeners: ((delayMs: number) => void)[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.histogram.enable();
    this.timer = setInterval(() => this.read(), WINDOW_MS);
    this.timer.unref();
  }

  /** Calls `listener` with each window's delay. */
  onWindow(listener: (delayMs: number) => void): void {
    this.listeners.push(listener);
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  private read(): void {
    // The longest delay of the window, in ms, beyond the sampling resolution.
    const delayMs = Math.max(0, this.histogram.max / 1e6 - RESOLUTION_MS);
    this.histogram.reset();
    for (const listener of this.listeners) listener(delayMs);
  }
}
