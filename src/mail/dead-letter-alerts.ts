import type { Knex } from '../database/sql';

/**
 * Records a dead-letter alert for each event that has just become a dead letter, in the transaction that
 * made it one (the attempt's), so that the dead letter and its alert commit together: the alert worker
 * mails it (AlertScheduler schedules it once committed, and its sweep finds it should that fail).
 */
export async function addDeadLetterAlerts(trx: Knex, eventIds: string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await trx.raw(
    `insert into dead_letter_alerts (endpoint_id, event_id)
     select endpoint_id, id from events where id = any(?::uuid[])`,
    [eventIds],
  );
}
