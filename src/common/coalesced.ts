/**
 * One run of `task` at a time. `run` starts one when none is going; `request` does too, and asks during a
 * run for one more right after it (the requests made during a run are one: that next run sees whatever
 * they were for). A failed run goes to `onError`. Once `stop` is called nothing starts until `resume`; it
 * resolves when the current run has ended.
 */
export class Coalesced {
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly onError: (error: Error) => void,
  ) {}

  run(): void {
    if (this.stopped || this.running) return;
    this.running = this.task()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.run();
        }
      });
  }

  request(): void {
    if (this.running) this.again = true;
    else this.run();
  }

  resume(): void {
    this.stopped = false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    while (this.running) await this.running;
  }
}
