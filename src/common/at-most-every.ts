/**
 * A gate for a repeated warning: `due()` is true at the first call and then once `ms` have passed since
 * the last true, so a fault that recurs on every request logs a line every `ms`, not one a request.
 */
export function atMostEvery(ms: number): { due(now?: number): boolean } {
  let last = -Infinity;
  return {
    due(now = Date.now()) {
      if (now - last < ms) return false;
      last = now;
      return true;
    },
  };
}
