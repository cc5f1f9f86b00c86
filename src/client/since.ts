const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d{1,6})([smhd])$/;
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * The start of `--since`: a duration back from `now` (`90s`, `10m`, `2h`, `1d`) or an ISO 8601 date or
 * date-time. One without an offset is local time, as a user at a terminal means it; JavaScript alone
 * would read a bare date as UTC but a bare date-time as local. Undefined when the value is neither.
 */
export function parseSince(value: string, now: Date): Date | undefined {
  const text = value.trim();
  const duration = DURATION.exec(text);
  if (duration) {
    const [, amount, unit] = duration;
    return new Date(now.getTime() - Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS]);
  }
  const instant = INSTANT.exec(text);
  if (!instant || !isCalendarDay(Number(instant[1]), Number(instant[2]), Number(instant[3])))
    return undefined;
  const since = new Date(text.length === 10 ? `${text}T00:00` : text);
  return Number.isNaN(since.getTime()) ? undefined : since;
}

/** JavaScript rolls 2026-02-30 over to March 2 instead of refusing it. */
function isCalendarDay(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
