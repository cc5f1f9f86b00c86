import { Client } from 'pg';

export interface Ledger {
  /** Capture ids the capture URL acknowledged with a 2xx. */
  acknowledged: number;
  /** Of those, the ones that are an event row. */
  stored: number;
  delivered: number;
  deadLetter: number;
  /** Events neither delivered nor dead-lettered that still have a `pending` or `failed` delivery. */
  pending: number;
  /** Acknowledged ids with no event row: lost captures. */
  missing: string[];
  /** Stored events that are neither delivered, dead-lettered nor owed an attempt: lost deliveries. */
  unaccounted: string[];
}

/**
 * The books of the at-least-once promise, read straight from PostgreSQL: every acknowledged capture id is
 * an event row, and every event is `delivered`, `dead_letter`, or has a `pending`/`failed` delivery.
 */
export async function ledger(databaseUrl: string, acknowledgedIds: readonly string[]): Promise<Ledger> {
  const ids = [...new Set(acknowledgedIds)];
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; status: string; open: boolean }>(
      `select e.id, e.status,
              exists (select 1 from deliveries d where d.event_id = e.id and d.status in ('pending', 'failed')) as open
         from events e
        where e.id = any($1::uuid[])`,
      [ids],
    );
    const found = new Set(rows.map((row) => row.id));
    const result: Ledger = {
      acknowledged: ids.length,
      stored: rows.length,
      delivered: 0,
      deadLetter: 0,
      pending: 0,
      missing: ids.filter((id) => !found.has(id)),
      unaccounted: [],
    };
    for (const row of rows) {
      if (row.status === 'delivered') result.delivered++;
      else if (row.status === 'dead_letter') result.deadLetter++;
      else if (row.open) result.pending++;
      else result.unaccounted.push(row.id);
    }
    return result;
  } finally {
    await client.end();
  }
}

/** How many delivery rows of these events are in each status, e.g. {"delivered": 2000}. */
export async function deliveryStatusCounts(
  databaseUrl: string,
  eventIds: readonly string[],
): Promise<Record<string, number>> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ status: string; count: number }>(
      `select status, count(*)::int as count from deliveries where event_id = any($1::uuid[]) group by status`,
      [[...new Set(eventIds)]],
    );
    return Object.fromEntries(rows.map((row) => [row.status, row.count]));
  } finally {
    await client.end();
  }
}

/** Polls the ledger until `done` holds or `timeoutMs` passes; returns the last reading either way. */
export async function waitForLedger(
  databaseUrl: string,
  acknowledgedIds: readonly string[],
  done: (books: Ledger) => boolean,
  timeoutMs: number,
): Promise<Ledger> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const books = await ledger(databaseUrl, acknowledgedIds);
    if (done(books) || Date.now() > deadline) return books;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export const allDelivered = (books: Ledger) =>
  books.missing.length === 0 && books.delivered === books.acknowledged;

/** Requests a destination received more than once (the same `hooktrail-id`): at-least-once duplicates. */
export function duplicateCount(received: readonly { headers: Record<string, unknown> }[]): number {
  return received.length - new Set(received.map((request) => request.headers['hooktrail-id'])).size;
}
