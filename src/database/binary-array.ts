/** How the elements of one type are written in PostgreSQL's binary format (what its `*_send` writes). */
export interface BinaryElement<T> {
  /** The element type's pg_type oid. */
  oid: number;
  byteLength(item: T): number;
  /** Writes `item` at `offset`; answers the offset after it. */
  write(buffer: Buffer, item: T, offset: number): number;
}

/** `text`: a string as UTF-8, or a Buffer's bytes as they are (which must be valid UTF-8 without NUL). */
export const TEXT: BinaryElement<string | Buffer> = {
  oid: 25,
  byteLength: (item) => (typeof item === 'string' ? Buffer.byteLength(item, 'utf8') : item.length),
  write: (buffer, item, offset) =>
    offset + (typeof item === 'string' ? buffer.write(item, offset, 'utf8') : item.copy(buffer, offset)),
};

export const BYTEA: BinaryElement<Buffer> = {
  oid: 17,
  byteLength: (item) => item.length,
  write: (buffer, item, offset) => offset + item.copy(buffer, offset),
};

const UUID_HEX = /^[0-9a-f]{32}$/i;

/** `uuid` from its usual text form: 16 bytes. */
export const UUID: BinaryElement<string> = {
  oid: 2950,
  byteLength: () => 16,
  write: (buffer, item, offset) => {
    const hex = item.replaceAll('-', '');
    if (!UUID_HEX.test(hex)) throw new TypeError(`not a UUID: ${item}`);
    return offset + buffer.write(hex, offset, 'hex');
  },
};

/** PostgreSQL's epoch, 2000-01-01T00:00:00Z, in Unix milliseconds. */
const POSTGRES_EPOCH_MS = 946_684_800_000;
const TWO_TO_32 = 2 ** 32;

/** `timestamptz` from a Date: microseconds since 2000-01-01 UTC, a big-endian int64. */
export const TIMESTAMPTZ: BinaryElement<Date> = {
  oid: 1184,
  byteLength: () => 8,
  write: (buffer, item, offset) => {
    const micros = (item.getTime() - POSTGRES_EPOCH_MS) * 1000;
    const high = Math.floor(micros / TWO_TO_32);
    buffer.writeInt32BE(high, offset);
    return buffer.writeUInt32BE(micros - high * TWO_TO_32, offset + 4);
  },
};

export const INT4: BinaryElement<number> = {
  oid: 23,
  byteLength: () => 4,
  write: (buffer, item, offset) => buffer.writeInt32BE(item, offset),
};

export const BOOL: BinaryElement<boolean> = {
  oid: 16,
  byteLength: () => 1,
  write: (buffer, item, offset) => buffer.writeUInt8(item ? 1 : 0, offset),
};

/** ndim, has-nulls flag, element type; then the one dimension's length and lower bound. */
const HEADER_BYTES = 20;

/**
 * A one-dimensional array parameter in PostgreSQL's binary array format (what `array_send` writes and
 * `array_recv` reads): each element is its length and its bytes, with nothing escaped. node-pg sends a
 * Buffer parameter in binary, so the statement reads it with a plain `$n::text[]` (or `uuid[]`, ...), and
 * PostgreSQL refuses an array whose element type is not the one the statement expects. It spares node-pg's
 * array literal, which turns every element into a string and copies it twice to escape it (the captured
 * bodies and headers above all), and PostgreSQL the parsing of that literal. Null elements are SQL nulls.
 */
export function binaryArray<T>(type: BinaryElement<T>, items: readonly (T | null)[]): Buffer {
  let size = HEADER_BYTES;
  let hasNulls = 0;
  const lengths = items.map((item) => {
    if (item === null) {
      hasNulls = 1;
      size += 4;
      return -1;
    }
    const length = type.byteLength(item);
    size += 4 + length;
    return length;
  });
  const buffer = Buffer.allocUnsafe(size);
  buffer.writeInt32BE(1, 0);
  buffer.writeInt32BE(hasNulls, 4);
  buffer.writeUInt32BE(type.oid, 8);
  buffer.writeInt32BE(items.length, 12);
  buffer.writeInt32BE(1, 16);
  let offset = HEADER_BYTES;
  items.forEach((item, index) => {
    offset = buffer.writeInt32BE(lengths[index], offset);
    if (item !== null) offset = type.write(buffer, item, offset);
  });
  return buffer;
}
