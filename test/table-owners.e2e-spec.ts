import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const SRC = resolve(__dirname, '..', 'src');

/**
 * Where each table's writing statements may stand (README, "Layers": a table is written by its owner's
 * code): paths under src/, a folder or a file. `database` holds the migrations and the statistics
 * triggers' functions they install.
 */
const OWNERS: Record<string, string[]> = {
  ai_results: ['ai'],
  api_keys: ['api-keys'],
  // A table of keys, each written by its one reader: the signing key, the encryption keys.
  app_settings: ['auth/jwt-secret.provider.ts', 'secrets'],
  audit_log: ['audit'],
  bulk_replay_events: ['delivery/bulk-replay'],
  bulk_replays: ['delivery/bulk-replay'],
  dead_letter_alerts: ['mail'],
  dedup_keys: ['events'],
  deliveries: ['delivery'],
  destination_attempt_stats: ['stats', 'database'],
  destinations: ['destinations'],
  endpoint_event_stats: ['stats', 'database'],
  endpoints: ['endpoints'],
  event_counts: ['database'],
  event_repeats: ['events'],
  events: ['events'],
  issues: ['issues'],
  notification_channels: ['notifications'],
  notification_outbox: ['notifications'],
  notification_windows: ['notifications'],
  refresh_tokens: ['auth'],
  routing_queue: ['events/capture/routing-queue.ts'],
  search_queue: ['events/search'],
  team_invitations: ['teams'],
  team_members: ['teams'],
  teams: ['teams'],
  users: ['auth', 'users', 'model'],
};

/** The one write outside its owner that the README names: the destinations' health columns. */
const EXCEPTIONS = ['issues/destination-health.ts writes destinations'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((path) => ({
  path: relative(SRC, path),
  text: readFileSync(path, 'utf8'),
}));

/**
 * The tables SQL text writes: `insert into`, `update` and `delete from` followed by a table's name (ORM
 * writes through entities are not SQL text and are not seen here; they go through src/model's entities).
 */
function writtenTables(text: string): string[] {
  return [...text.matchAll(/\b(?:insert\s+into|update|delete\s+from)\s+"?([a-z_]+)"?/gi)]
    .map((match) => match[1].toLowerCase())
    .filter((table) => table in OWNERS);
}

const owns = (path: string, owner: string) => path === owner || path.startsWith(`${owner}/`);

describe("each table is written by its owner's code (README, Layers)", () => {
  it('gives every table the migrations create an owner', () => {
    const created = new Set(
      files
        .filter(({ path }) => path.startsWith('database/'))
        .flatMap(({ text }) => [
          ...text.matchAll(/create\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?"?([a-z_]+)/gi),
        ])
        .map((match) => match[1].toLowerCase()),
    );
    expect(created.size).toBeGreaterThan(20);
    expect([...created].filter((table) => !(table in OWNERS))).toEqual([]);
  });

  it('finds writes of every table only in its owner, but the one exception', () => {
    // The migrations change the schema and move its data: any table's.
    const code = files.filter(({ path }) => !path.startsWith('database/migrations/'));
    const outside = code.flatMap(({ path, text }) =>
      [...new Set(writtenTables(text))]
        .filter((table) => !OWNERS[table].some((owner) => owns(path, owner)))
        .map((table) => `${path} writes ${table}`),
    );
    expect(outside).toEqual(EXCEPTIONS);
  });

  it('sees a write put outside its owner', () => {
    const text = 'await trx.raw(`insert into dead_letter_alerts (endpoint_id) values (?)`, [id]);';
    expect(writtenTables(text)).toEqual(['dead_letter_alerts']);
    expect(OWNERS.dead_letter_alerts.some((owner) => owns('delivery/attempt-recorder.ts', owner))).toBe(
      false,
    );
  });
});
