/**
 * The path and query a forwarded request is sent to: the URL's own path and query, then the captured query
 * string exactly as it came (not parsed and written again, which would percent-encode `'`, `"`, `<` or `>`).
 */
export function targetPath(target: URL, query: string): string {
  const search = [target.search.slice(1), query].filter(Boolean).join('&');
  return search ? `${target.pathname}?${search}` : target.pathname;
}

const NO_OPTIONS: ReadonlySet<string> = new Set();

/**
 * The header names a captured `Connection` header lists, lower-case (RFC 9110 §7.6.1: hop-by-hop, never
 * forwarded); it may have been captured once or repeated (a list). None without one.
 */
export function connectionOptions(connection: unknown): ReadonlySet<string> {
  const list = Array.isArray(connection) ? connection.join(',') : connection;
  if (typeof list !== 'string') return NO_OPTIONS;
  return new Set(list.split(',').map((name) => name.trim().toLowerCase()));
}
