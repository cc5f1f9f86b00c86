/**
 * The path and query a forwarded request is sent to: the URL's own path and query, then the captured query
 * string exactly as it came (not parsed and written again, which would percent-encode `'`, `"`, `<` or `>`).
 */
export function targetPath(target: URL, query: string): string {
  const search = [target.search.slice(1), query].filter(Boolean).join('&');
  return search ? `${target.pathname}?${search}` : target.pathname;
}
