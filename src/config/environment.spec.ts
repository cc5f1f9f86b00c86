import { ConfigurationError, environmentVariables, loadEnvironment, PlanRetention } from './environment';

describe('RETENTION_DAYS and RETENTION_INTERVAL_MS', () => {
  it('default to free:7,starter:30,pro:90,team:365 and a pass a minute', () => {
    const sut = loadEnvironment({});

    expect(sut.RETENTION_DAYS.days).toEqual({ free: 7, starter: 30, pro: 90, team: 365 });
    expect(sut.RETENTION_INTERVAL_MS).toBe(60_000);
  });

  it('read every plan in any order, with spaces, and hand the value on as it was read', () => {
    const sut = loadEnvironment({
      RETENTION_DAYS: ' team:400, free : 1,pro:3650,starter:14 ',
      RETENTION_INTERVAL_MS: '250',
    });

    expect(sut.RETENTION_DAYS.days).toEqual({ free: 1, starter: 14, pro: 3650, team: 400 });
    expect(sut.RETENTION_INTERVAL_MS).toBe(250);
    const handedOn = environmentVariables(sut);
    expect(handedOn.RETENTION_DAYS).toBe('free:1,starter:14,pro:3650,team:400');
    expect(loadEnvironment(handedOn).RETENTION_DAYS.days).toEqual(sut.RETENTION_DAYS.days);
  });

  it.each([
    ['a plan left out', 'free:7,starter:30,pro:90'],
    ['a plan named twice', 'free:7,free:8,starter:30,pro:90,team:365'],
    ['an unknown plan', 'free:7,starter:30,pro:90,team:365,enterprise:999'],
    ['zero days', 'free:0,starter:30,pro:90,team:365'],
    ['more than ten years', 'free:7,starter:30,pro:90,team:3651'],
    ['days that are not whole', 'free:7.5,starter:30,pro:90,team:365'],
    ['no days', 'free,starter:30,pro:90,team:365'],
    ['another shape', '7,30,90,365'],
  ])('refuse %s with one line naming the variable and the expected form', (_label, value) => {
    const load = () => loadEnvironment({ RETENTION_DAYS: value });

    expect(load).toThrow(ConfigurationError);
    expect(load).toThrow(
      `Configuration error: RETENTION_DAYS must give each plan (free, starter, pro, team) its days from 1 to 3650, e.g. free:7,starter:30,pro:90,team:365 (got ${JSON.stringify(value)})`,
    );
  });

  it.each(['0', '99', '86400001', 'soon'])('refuse RETENTION_INTERVAL_MS=%s', (value) => {
    expect(() => loadEnvironment({ RETENTION_INTERVAL_MS: value })).toThrow(
      /^Configuration error: RETENTION_INTERVAL_MS must be a whole number of milliseconds from 100 to 86400000/,
    );
  });

  it('parses only what names every plan', () => {
    expect(PlanRetention.parse('free:7,starter:30,pro:90,team:365')?.toString()).toBe(
      'free:7,starter:30,pro:90,team:365',
    );
    expect(PlanRetention.parse('')).toBeNull();
  });
});

describe('TRUST_PROXY', () => {
  it.each([
    [undefined, 0],
    ['false', 0],
    ['true', 1],
    ['0', 0],
    ['1', 1],
    ['2', 2],
  ])('reads %s as %i proxies in front, and hands it on as it was read', (value, hops) => {
    const sut = loadEnvironment(value === undefined ? {} : { TRUST_PROXY: value });

    expect(sut.TRUST_PROXY).toBe(hops);
    expect(loadEnvironment(environmentVariables(sut)).TRUST_PROXY).toBe(hops);
  });

  it.each(['yes', '-1', '11', '1.5'])('refuses TRUST_PROXY=%s with one line naming it', (value) => {
    expect(() => loadEnvironment({ TRUST_PROXY: value })).toThrow(
      /^Configuration error: TRUST_PROXY must be true \(one proxy in front\), false, or how many proxies are in front, 0 to 10/,
    );
  });
});
