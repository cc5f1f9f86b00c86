import { PeriodicTask } from './periodic-task';

/** A task whose runs the test ends one by one. */
function controlledTask() {
  const ends: (() => void)[] = [];
  const task = jest.fn(() => new Promise<void>((resolve) => ends.push(resolve)));
  const endRun = async () => {
    ends.shift()?.();
    // Lets the run's `finally` (and a rerun it starts) happen.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { task, endRun };
}

describe(PeriodicTask.name, () => {
  it('runs at once when woken, and once more after the run for any number of wakes during it', async () => {
    const { task, endRun } = controlledTask();
    const sut = new PeriodicTask(task, 60_000, () => undefined);
    sut.wake();
    expect(task).toHaveBeenCalledTimes(1);
    sut.wake();
    sut.wake();
    sut.wake();
    expect(task).toHaveBeenCalledTimes(1);
    await endRun();
    expect(task).toHaveBeenCalledTimes(2);
    await endRun();
    expect(task).toHaveBeenCalledTimes(2);
    await sut.stop();
  });

  it('stops after the current run, without the rerun a wake asked for', async () => {
    const { task, endRun } = controlledTask();
    const sut = new PeriodicTask(task, 60_000, () => undefined);
    sut.wake();
    sut.wake();
    const stopped = sut.stop();
    await endRun();
    await stopped;
    sut.wake();
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('hands a failed run to onError and runs again when woken', async () => {
    const onError = jest.fn();
    const task = jest.fn().mockRejectedValueOnce(new Error('database away')).mockResolvedValue(undefined);
    const sut = new PeriodicTask(task, 60_000, onError);
    sut.wake();
    await new Promise((resolve) => setImmediate(resolve));
    expect(onError).toHaveBeenCalledWith(new Error('database away'));
    sut.wake();
    expect(task).toHaveBeenCalledTimes(2);
    await sut.stop();
  });
});
