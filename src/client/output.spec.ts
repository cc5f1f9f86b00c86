import { outputStyle } from './output';

describe(outputStyle.name, () => {
  it('colours and spins for a person at a terminal', () => {
    expect(outputStyle(false, true, {})).toEqual({ color: true, spinner: true });
  });

  it('does neither when stdout is piped or --json is asked', () => {
    expect(outputStyle(false, false, {})).toEqual({ color: false, spinner: false });
    expect(outputStyle(true, true, {})).toEqual({ color: false, spinner: false });
  });

  it('honours NO_COLOR when it is not empty', () => {
    expect(outputStyle(false, true, { NO_COLOR: '1' })).toEqual({ color: false, spinner: true });
    expect(outputStyle(false, true, { NO_COLOR: '' })).toEqual({ color: true, spinner: true });
  });
});
