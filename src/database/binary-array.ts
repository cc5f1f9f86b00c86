/** Element types of the arrays sent in binary (pg_type oids). */
export const TEXT_OID = 25;
export const BYTEA_OID = 17;

/** ndim, has-nulls flag, element type; then the one dimension's length and lower bound. */
const HEADER_BYTES = 20;

/**
 * A one-dimensional `text[]` or `bytea[]` parameter in PostgreSQL's binary array format (what `array_send`
 * writes and `array_recv` reads): each element is its length and its bytes, with nothing escaped. node-pg
 * sends a Buffer parameter in binary, so the statement reads it with a plain `$n::text[]` (or `bytea[]`).
 * For large elements (captured bodies and headers) it spares node-pg's array literal, which copies each
 * string twice to escape it, and PostgreSQL the parsing of that literal. Strings are written as UTF-8,
 * as node-pg writes a text parameter; null elements are SQL nulls.
 */
export function binaryArray(elementOid: number, items: readonly (string | Buffer | null)[]): Buffer {
  let size = HEADER_BYTES;
  const lengths = items.map((item) => {
    const length =
      item === null ? -1 : typeof item === 'string' ? Buffer.byteLength(item, 'utf8') : item.length;
    size += 4 + Math.max(length, 0);
    return length;
  });
  const buffer = Buffer.allocUnsafe(size);
  buffer.writeInt32BE(1, 0);
  buffer.writeInt32BE(lengths.includes(-1) ? 1 : 0, 4);
  buffer.writeUInt32BE(elementOid, 8);
  buffer.writeInt32BE(items.length, 12);
  buffer.writeInt32BE(1, 16);
  let offset = HEADER_BYTES;
  items.forEach((item, index) => {
    offset = buffer.writeInt32BE(lengths[index], offset);
    if (typeof item === 'string') offset += buffer.write(item, offset, 'utf8');
    else if (item !== null) offset += item.copy(buffer, offset);
  });
  return buffer;
}
