/**
 * Runs `task` every `intervalMs`, never two runs at once (a run still going when the next is due is not
 * doubled). A failed run goes to `onError`; the next one runs as usual. `stop` waits for the current run.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (error: Error) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.task()
        .catch(this.onError)
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
