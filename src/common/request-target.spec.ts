import { targetPath } from './request-target';

describe(targetPath.name, () => {
  it("appends the captured query string to the target URL's path", () => {
    expect(targetPath(new URL('http://localhost:4000/hooks'), 'a=1&b=%20')).toBe('/hooks?a=1&b=%20');
  });

  it("keeps the target URL's own query first", () => {
    expect(targetPath(new URL('http://localhost:4000/hooks?env=dev'), 'a=1')).toBe('/hooks?env=dev&a=1');
  });

  it('adds no "?" when there is no query', () => {
    expect(targetPath(new URL('http://localhost:4000'), '')).toBe('/');
  });
});
