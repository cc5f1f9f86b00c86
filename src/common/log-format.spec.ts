import pino from 'pino';
import { Writable } from 'node:stream';
import { logFormat } from './log-format';

function capture(nodeEnv: string) {
  const lines: { level: number; context?: string; msg: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const { hooks } = logFormat(nodeEnv);
  return { logger: pino({ level: 'info', hooks }, sink), lines };
}

describe('logFormat', () => {
  const isTTY = process.stdout.isTTY;
  afterEach(() => (process.stdout.isTTY = isTTY));

  it('pretty-prints in a terminal, except in production', () => {
    process.stdout.isTTY = true;
    expect(logFormat('development').transport).toMatchObject({ target: 'pino-pretty' });
    expect(logFormat('production').transport).toBeUndefined();
  });

  it('writes JSON lines when stdout is not a terminal', () => {
    process.stdout.isTTY = false;
    expect(logFormat('development').transport).toBeUndefined();
  });

  it("keeps Nest's start-up lines at debug and everything else as logged", () => {
    const { logger, lines } = capture('test');
    logger.info({ context: 'RouterExplorer' }, 'Mapped {/api/endpoints, GET} route');
    logger.info({ context: 'InstanceLoader' }, 'AppModule dependencies initialized');
    logger.info({ context: 'Hooktrail' }, 'Hooktrail is running');
    logger.warn({ context: 'RouterExplorer' }, 'a warning is kept');
    logger.info('no context');
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [30, 'Hooktrail is running'],
      [40, 'a warning is kept'],
      [30, 'no context'],
    ]);
  });
});
