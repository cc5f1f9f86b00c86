import { setFlagsFromString } from 'node:v8';
import { HEAP_GROWING_PERCENT, limitHeapGrowth } from './heap-growth';

jest.mock('node:v8', () => ({ setFlagsFromString: jest.fn() }));

describe('limitHeapGrowth', () => {
  beforeEach(() => jest.mocked(setFlagsFromString).mockClear());

  it('sets V8 heap growth to HEAP_GROWING_PERCENT', () => {
    limitHeapGrowth(['--enable-source-maps']);
    expect(setFlagsFromString).toHaveBeenCalledWith(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  });

  it.each(['--heap-growing-percent=200', '--heap_growing_percent=10'])(
    'leaves the growth node was given (%s)',
    (argument) => {
      limitHeapGrowth([argument]);
      expect(setFlagsFromString).not.toHaveBeenCalled();
    },
  );
});
