import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Opened secrets kept by their sealed form, so that a destination's secret is not decrypted per delivery. */
const OPENED_CACHE_SIZE = 1000;

/** A sealed value that no key of this process opens, or that was altered. */
export class SecretUnreadableError extends Error {}

/**
 * Secrets at rest (design: "Secrets at rest"): AES-256-GCM, stored as `v1.<key id>.<iv>.<ciphertext and tag>`
 * (base64url). The key id (the first 8 hex digits of the key's SHA-256) says which key opens a value, so that
 * during a rotation values sealed under the previous key still open while new ones are sealed under the
 * current key.
 */
export class SecretBox {
  readonly currentKeyId: string;
  private readonly keys = new Map<string, Buffer>();
  private readonly opened = new Map<string, string>();

  constructor(
    private readonly current: Buffer,
    previous?: Buffer,
  ) {
    this.currentKeyId = SecretBox.keyId(current);
    this.keys.set(this.currentKeyId, current);
    if (previous) this.keys.set(SecretBox.keyId(previous), previous);
  }

  static keyId(key: Buffer): string {
    return createHash('sha256').update(key).digest('hex').slice(0, 8);
  }

  /** The key id a sealed value names (undefined when it is not a sealed value). */
  static keyIdOf(value: string): string | undefined {
    const [format, keyId] = value.split('.');
    return format === FORMAT ? keyId : undefined;
  }

  /** The ids of the keys this box opens values with: the current one first. */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [FORMAT, this.currentKeyId, iv.toString('base64url'), sealed.toString('base64url')].join('.');
  }

  open(value: string): string {
    const cached = this.opened.get(value);
    if (cached !== undefined) return cached;
    const [format, keyId, iv, sealed] = value.split('.');
    const key = this.keys.get(keyId);
    if (format !== FORMAT || !key || !iv || !sealed)
      throw new SecretUnreadableError(
        `a secret is sealed under key ${keyId ?? '?'}, which this process does not have`,
      );
    const bytes = Buffer.from(sealed, 'base64url');
    let plaintext: string;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      plaintext = Buffer.concat([
        decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretUnreadableError(`a secret sealed under key ${keyId} does not open: it was altered`);
    }
    if (this.opened.size >= OPENED_CACHE_SIZE) this.opened.clear();
    this.opened.set(value, plaintext);
    return plaintext;
  }
}
