import { createHash } from 'node:crypto';

/** How opaque credentials (refresh tokens, API keys) are stored: random enough that SHA-256 alone is safe. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
