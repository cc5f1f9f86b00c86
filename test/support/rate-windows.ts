/** Rate limits counted in fixed clock seconds, and the bursts that test them. */

/** Waits for the next clock second to begin (and 5 ms into it). */
export const startOfSecond = () =>
  new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));
/**
 * The limiter counts in fixed clock seconds (the same clock here: one machine). A burst begun just after a
 * second began still crosses into the next one when the machine is busy (the requests then take longer
 * than the 995 ms left), and that second's window lets RATE more through: an exact count of 200s is only
 * true of a burst inside one second. The clock seconds a burst touched, from its first send to its last
 * answer, bound what the limiter let through.
 */
export async function timed<T>(burst: () => Promise<T>): Promise<{ result: T; windows: number }> {
  const started = Date.now();
  const result = await burst();
  return { result, windows: Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1 };
}
/** Of `answers`, those let through: at least `rate`, at most `rate` in each window the burst touched. */
export function expectLimited(answers: { status: number }[], rate: number, windows: number): number {
  const passed = answers.filter((response) => response.status === 200).length;
  expect(answers.every((response) => response.status === 200 || response.status === 429)).toBe(true);
  expect(passed).toBeGreaterThanOrEqual(rate);
  expect(passed).toBeLessThanOrEqual(Math.min(rate * windows, answers.length));
  // Inside one second: the limit exactly.
  if (windows === 1) expect(passed).toBe(rate);
  return passed;
}
