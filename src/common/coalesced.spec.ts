import { Coalesced } from './coalesced';

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

describe(Coalesced.name, () => {
  it('runs at once when requested, and once more after the run for any number of requests during it', async () => {
    const { task, endRun } = controlledTask();
    const sut = new Coalesced(task, () => undefined);
    sut.request();
    expect(task).toHaveBeenCalledTimes(1);
    sut.request();
    sut.request();
    sut.request();
    expect(task).toHaveBeenCalledTimes(1);
    await endRun();
    expect(task).toHaveBeenCalledTimes(2);
    await endRun();
    expect(task).toHaveBeenCalledTimes(2);
  });

  it('drops a plain run asked for during a run (a timer tick), with no rerun after it', async () => {
    const { task, endRun } = controlledTask();
    const sut = new Coalesced(task, () => undefined);
    sut.run();
    sut.run();
    await endRun();
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('stops after the current run, without the rerun a request asked for, until resumed', async () => {
    const { task, endRun } = controlledTask();
    const sut = new Coalesced(task, () => undefined);
    sut.request();
    sut.request();
    const stopped = sut.stop();
    await endRun();
    await stopped;
    sut.request();
    expect(task).toHaveBeenCalledTimes(1);
    sut.resume();
    sut.request();
    expect(task).toHaveBeenCalledTimes(2);
    await endRun();
  });

  it('hands a failed run to onError and runs again when requested', async () => {
    const onError = jest.fn();
    const task = jest.fn().mockRejectedValueOnce(new Error('database away')).mockResolvedValue(undefined);
    const sut = new Coalesced(task, onError);
    sut.request();
    await new Promise((resolve) => setImmediate(resolve));
    expect(onError).toHaveBeenCalledWith(new Error('database away'));
    sut.request();
    expect(task).toHaveBeenCalledTimes(2);
    await sut.stop();
  });
});
