import { expiresAt, expiryText, today } from './api-keys';
import { localTime } from './format';
import type { ApiKey } from './types';

/** The API keys page: the `expires_at` it sends for each choice, and how it shows a key's expiry. */
describe('API keys: expiry', () => {
  const now = Date.parse('2026-11-24T10:00:00.000Z');
  const key = (expires_at: string | null): ApiKey => ({
    id: 'k_1',
    name: 'CI',
    scope: 'read',
    prefix: 'htk_Xy3kP9aQ',
    created_at: '2026-11-01T10:00:00.000Z',
    expires_at,
    last_used_at: null,
  });

  it('sends null for never, and a number of days from now', () => {
    expect(expiresAt('never', '', now)).toBeNull();
    expect(expiresAt('30', '', now)).toBe('2026-12-24T10:00:00.000Z');
    expect(expiresAt('365', '', now)).toBe('2027-11-24T10:00:00.000Z');
  });

  it('sends the end of a chosen day, in local time', () => {
    const end = new Date(expiresAt('date', '2027-03-14', now) ?? '');
    expect([end.getFullYear(), end.getMonth() + 1, end.getDate()]).toEqual([2027, 3, 14]);
    expect([end.getHours(), end.getMinutes(), end.getSeconds()]).toEqual([23, 59, 59]);
    expect(today(end.getTime())).toBe('2027-03-14');
  });

  it('shows "never", the expiry, or "expired" once it is past', () => {
    expect(expiryText(key(null), now)).toBe('never');
    expect(expiryText(key('2026-12-01T00:00:00.000Z'), now)).toBe(localTime('2026-12-01T00:00:00.000Z'));
    expect(expiryText(key('2026-11-24T09:59:59.000Z'), now)).toBe(
      `expired ${localTime('2026-11-24T09:59:59.000Z')}`,
    );
  });
});
