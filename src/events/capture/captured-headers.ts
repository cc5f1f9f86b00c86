import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/**
 * A request's headers as they came, by lower-case name. Node's `headers` when no name came twice (the
 * usual case: nothing more is built). Otherwise every value, from `rawHeaders`: for a repeated name, Node
 * keeps only the first value of some (`content-type`, `authorization`, `user-agent`, ...) and joins the
 * others with ", "; here a repeated name has the list of its values, in order (`set-cookie` always a list,
 * as Node has it).
 */
export function capturedHeaders({
  headers,
  rawHeaders,
}: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): IncomingHttpHeaders {
  let names = 0;
  for (const name in headers) if (Object.hasOwn(headers, name)) names++;
  if (rawHeaders.length === names * 2) return headers;
  const values = new Map<string, string[]>();
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index].toLowerCase();
    const list = values.get(name);
    if (list) list.push(rawHeaders[index + 1]);
    else values.set(name, [rawHeaders[index + 1]]);
  }
  const all: IncomingHttpHeaders = Object.create(null);
  for (const [name, list] of values) all[name] = list.length === 1 && name !== 'set-cookie' ? list[0] : list;
  return all;
}
