/** How the delivery engine is configured: what a diagnosis tells the user about retries and time-outs. */
export interface DeliveryPolicy {
  /** DELIVERY_TIMEOUT_MS: how long an attempt waits for an answer. */
  timeoutMs: number;
  /** DELIVERY_RETRY_DELAYS_MS: the wait before each retry. */
  retryDelaysMs: number[];
}

/** A delay as a person says it: "500 ms", "5 s", "2 min", "1.5 h". */
export function spokenDuration(ms: number): string {
  const units: [number, string][] = [
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1_000, 's'],
  ];
  for (const [size, unit] of units) if (ms >= size) return `${Number((ms / size).toFixed(1))} ${unit}`;
  return `${ms} ms`;
}

/** "Hooktrail retries after 5 s, 25 s, 2 min and 10 min", or that it makes one attempt only. */
export function describeRetries(policy: DeliveryPolicy): string {
  const delays = policy.retryDelaysMs.map(spokenDuration);
  if (delays.length === 0) return 'Hooktrail makes one attempt and does not retry';
  const list = delays.length === 1 ? delays[0] : `${delays.slice(0, -1).join(', ')} and ${delays.at(-1)}`;
  return `Hooktrail retries after ${list}`;
}
