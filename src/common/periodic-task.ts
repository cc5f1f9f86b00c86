import { Coalesced } from './coalesced';

/**
 * Runs `task` every `intervalMs`, never two runs at once (a run still going when the next is due is not
 * doubled), and at once when woken. A failed run goes to `onError`; the next one runs as usual. `stop`
 * waits for the current run.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private readonly runs: Coalesced;

  constructor(
    task: () => Promise<void>,
    private readonly intervalMs: number,
    onError: (error: Error) => void,
  ) {
    this.runs = new Coalesced(task, onError);
  }

  start(): void {
    this.runs.resume();
    this.timer = setInterval(() => this.runs.run(), this.intervalMs);
  }

  /**
   * Runs the task now, or once more as soon as the current run ends (wakes during a run are one rerun:
   * whatever they announced, that run finds).
   */
  wake(): void {
    this.runs.request();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.runs.stop();
  }
}
