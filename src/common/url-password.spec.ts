import { REDACTED_PASSWORD, withoutUrlPassword } from './url-password';

describe('withoutUrlPassword', () => {
  it("redacts a URL's password, keeping the user name, host, path and query", () => {
    expect(withoutUrlPassword('https://ops:S3cret@api.example.com/hook?x=1')).toBe(
      `https://ops:${REDACTED_PASSWORD}@api.example.com/hook?x=1`,
    );
    // An "@" in the password or the user name (the URL takes the last one as the end of the user information).
    expect(withoutUrlPassword('https://ops:p@ss@api.example.com/')).toBe(
      `https://ops:${REDACTED_PASSWORD}@api.example.com/`,
    );
    expect(withoutUrlPassword('https://a@b:pw@api.example.com/')).toBe(
      `https://a%40b:${REDACTED_PASSWORD}@api.example.com/`,
    );
  });

  it('leaves other text as it is: no password, no URL, a colon only in the host', () => {
    for (const text of ['https://ops@api.example.com/', 'https://api.example.com:8443/a@b', 'a:b@c', ''])
      expect(withoutUrlPassword(text)).toBe(text);
  });

  it('reads a long text that only looks like the start of such a URL in one pass', () => {
    // 200,000 colons took the earlier pattern minutes of backtracking (its two runs both matched ":").
    const started = performance.now();
    expect(withoutUrlPassword(`http://${':'.repeat(200_000)}`)).toBe(`http://${':'.repeat(200_000)}`);
    expect(withoutUrlPassword(`http://a:${':'.repeat(200_000)}`)).toBe(`http://a:${':'.repeat(200_000)}`);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
