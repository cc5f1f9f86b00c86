const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** Local date and time with seconds, or an em dash. */
export function localTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

/** The value for <input type="datetime-local"> of an ISO string (local time), or ''. */
export function isoToLocalInput(iso: string): string {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** An ISO 8601 UTC string of a datetime-local value (read as local time), or ''. */
export function localInputToIso(value: string): string {
  if (!value) return '';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}

export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/** A one-line preview of a body. */
export function preview(body: string | undefined, encoding?: string, max = 140): string {
  if (body === undefined) return '';
  if (encoding === 'base64') return '(binary body, base64)';
  const line = body.replace(/\s+/g, ' ').trim();
  if (!line) return '(empty body)';
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The body as shown: pretty JSON when it parses, raw otherwise. */
export function formatBody(body: string, encoding?: string): { text: string; json: boolean } {
  if (encoding === 'base64') return { text: body, json: false };
  const trimmed = body.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return { text: JSON.stringify(JSON.parse(trimmed), null, 2), json: true };
    } catch {
      // not JSON after all
    }
  }
  return { text: body, json: false };
}

/** Bytes of a base64 string. */
export function base64Size(value: string): number {
  const clean = value.replace(/=+$/, '');
  return Math.floor((clean.length * 3) / 4);
}
