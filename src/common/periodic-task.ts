/**
 * Runs `task` every `intervalMs`, never two runs at once (a run still going when the next is due is not
 * doubled), and at once when woken. A failed run goes to `onError`; the next one runs as usual. `stop`
 * waits for the current run.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** Woken while a run was going: one more run right after it. */
  private rerun = false;
  private stopped = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (error: Error) => void,
  ) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.run(), this.intervalMs);
  }

  /**
   * Runs the task now, or once more as soon as the current run ends (wakes during a run are one rerun:
   * whatever they announced, that run finds).
   */
  wake(): void {
    if (this.running) this.rerun = true;
    else this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    while (this.running) await this.running;
  }

  private run(): void {
    if (this.stopped) return;
    this.running ??= this.task()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
        if (this.rerun) {
          this.rerun = false;
          this.run();
        }
      });
  }
}
