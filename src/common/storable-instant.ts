/**
 * Whether an instant lies in the UTC years 1 to 9999: what an ISO 8601 string the API writes, and a
 * PostgreSQL `timestamptz`, can hold. Year 0, or an offset that moves 9999-12-31 into year 10000, passes
 * a format check but not the database.
 */
export function isStorableInstant(instant: Date): boolean {
  const year = instant.getUTCFullYear();
  return year >= 1 && year <= 9999;
}
