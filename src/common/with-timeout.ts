/**
 * Rejects when `store` has not answered `promise` within `ms` (an outage must not hang the caller). The
 * timer goes once the promise settles, so a caller that loops does not pile up timers.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, store: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${store} did not answer in ${ms} ms`)), ms).unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
