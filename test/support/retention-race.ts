import { Client } from 'pg';
import { eventually } from './eventually';

/**
 * Runs `operation` while a retention batch's transaction holds the event (taken `for update`, as a batch
 * takes it), and deletes the event once a statement waits for it, as that batch would; resolves with what
 * `operation` answered.
 */
export async function whileRetentionDeletes<T>(
  databaseUrl: string,
  eventId: string,
  operation: () => Promise<T>,
): Promise<T> {
  const retention = new Client({ connectionString: databaseUrl });
  await retention.connect();
  try {
    await retention.query('begin');
    await retention.query('select 1 from events where id = $1 for update', [eventId]);
    const result = operation();
    // Observed through `result` below; not an unhandled rejection should it fail before waiting.
    result.catch(() => undefined);
    await eventually(
      async () =>
        (
          await retention.query(
            `select count(*)::int as n from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock'`,
          )
        ).rows[0].n,
      (waiting) => waiting > 0,
    );
    await retention.query('delete from events where id = $1', [eventId]);
    await retention.query('commit');
    return await result;
  } finally {
    await retention.end();
  }
}
