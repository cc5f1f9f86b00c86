/**
 * A URL with a password in its user information (`https://user:password@host/`): Basic credentials. The
 * user name stops at the first colon and the password at the first `@` after it, so that a long text that
 * is not such a URL (`http://::::…`) fails in one pass, not in a time that grows with its length squared.
 */
const URL_WITH_PASSWORD = /^https?:\/\/[^/?#:]*:[^/?#@]*@/i;

/** What a URL's password becomes where it is shown to others than its owner's API. */
export const REDACTED_PASSWORD = '[redacted]';

/**
 * A URL with its password redacted (the user name, host, path and query kept); any other text as it is.
 * For the audit log and the messages sent to notification channels and by mail, which hold no secret.
 */
export function withoutUrlPassword(text: string): string {
  if (!URL_WITH_PASSWORD.test(text) || !URL.canParse(text)) return text;
  const url = new URL(text);
  if (url.password === '') return text;
  return `${url.protocol}//${url.username}:${REDACTED_PASSWORD}@${url.host}${url.pathname}${url.search}${url.hash}`;
}
