import { isoToLocalInput, localTime } from './format';
import type { ApiKey } from './types';

/** What a key of each scope may do, as the API keys page says it. */
export const SCOPE_TEXT: Record<ApiKey['scope'], { label: string; explanation: string }> = {
  read: { label: 'Read', explanation: 'Only reads (GET requests): it can never change anything.' },
  write: { label: 'Write', explanation: 'Everything you can do, except managing API keys.' },
};

/** When a new key stops working: never, a number of days from now, or at the end of a chosen day. */
export type ExpiryChoice = 'never' | '30' | '90' | '365' | 'date';

export const EXPIRY_OPTIONS: readonly (readonly [ExpiryChoice, string])[] = [
  ['never', 'Never'],
  ['30', 'In 30 days'],
  ['90', 'In 90 days'],
  ['365', 'In 1 year'],
  ['date', 'On a date'],
];

const DAY_MS = 86_400_000;

/** The `expires_at` to send: null for never; a chosen day (YYYY-MM-DD) ends at midnight, local time. */
export function expiresAt(choice: ExpiryChoice, day: string, now = Date.now()): string | null {
  if (choice === 'never') return null;
  if (choice === 'date') return new Date(`${day}T23:59:59.999`).toISOString();
  return new Date(now + Number(choice) * DAY_MS).toISOString();
}

/** Today as YYYY-MM-DD, local time: the first day a key can be set to expire on. */
export function today(now = Date.now()): string {
  return isoToLocalInput(new Date(now).toISOString()).slice(0, 10);
}

/** "never", when the key expires, or "expired ..." once that is past. */
export function expiryText(key: ApiKey, now = Date.now()): string {
  if (key.expires_at === null) return 'never';
  const at = localTime(key.expires_at);
  return Date.parse(key.expires_at) <= now ? `expired ${at}` : at;
}
