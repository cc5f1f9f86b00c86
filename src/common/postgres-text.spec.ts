import { postgresText } from './postgres-text';

describe('postgresText', () => {
  it('replaces NUL and lone surrogates with U+FFFD, and keeps surrogate pairs', () => {
    expect(postgresText('a\u0000b')).toBe('a\uFFFDb');
    expect(postgresText('\uD800x\uDC00')).toBe('\uFFFDx\uFFFD');
    expect(postgresText('end\uD83D')).toBe('end\uFFFD');
    expect(postgresText('emoji 😀 kept')).toBe('emoji 😀 kept');
    expect(postgresText('plain')).toBe('plain');
  });
});
