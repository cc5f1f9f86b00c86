import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { isoColumn } from '../database/iso-column';
import type { ActorType, NewAuditEntry } from './audit-entry';
import { sqlOf } from '../database/write-transaction';

/** Which entries a reader asked for; every field set must match. */
export interface AuditLogFilter {
  teamId?: string;
  endpointId?: string;
  accountUserId?: string;
}

export interface AuditLogRow {
  /** A bigint, as text. */
  id: string;
  /** ISO 8601 UTC. */
  at: string;
  actor_type: ActorType;
  actor_id: string;
  actor_email: string;
  action: string;
  target_type: string;
  target_id: string | null;
  ip: string | null;
  changes: Record<string, unknown>;
}

/** `id` is the bigint as text: an order by it must name `audit_log.id`, or it sorts the text. */
const ROW_COLUMNS = `id::text as id, ${isoColumn('at')} as at, actor_type, actor_id, actor_email, action,
  target_type, target_id, ip, changes`;

/** The filter's columns, each served by its own partial index (team_id, endpoint_id, account_user_id). */
const FILTER_COLUMNS: Record<keyof AuditLogFilter, string> = {
  teamId: 'team_id',
  endpointId: 'endpoint_id',
  accountUserId: 'account_user_id',
};

/** The filter as SQL; an empty filter matches nothing, never the whole log. */
function whereOf(filter: AuditLogFilter): { sql: string; bindings: string[] } {
  const set = (Object.keys(FILTER_COLUMNS) as (keyof AuditLogFilter)[]).filter(
    (field) => filter[field] !== undefined,
  );
  return {
    sql: set.map((field) => `${FILTER_COLUMNS[field]} = ?`).join(' and ') || 'false',
    bindings: set.map((field) => filter[field]!),
  };
}

/** The audit log's table: one row per write through the API, never updated. */
@Injectable()
export class AuditLogRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex() {
    return sqlOf(this.em);
  }

  async insert(entry: NewAuditEntry): Promise<void> {
    await this.knex.raw(
      `insert into audit_log (actor_type, actor_id, actor_user_id, actor_email, action, target_type, target_id,
                              account_user_id, team_id, endpoint_id, ip, changes)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)`,
      [
        entry.actorType,
        entry.actorId,
        entry.actorUserId,
        entry.actorEmail,
        entry.action,
        entry.targetType,
        entry.targetId,
        entry.accountUserId,
        entry.teamId,
        entry.endpointId,
        entry.ip,
        JSON.stringify(entry.changes),
      ],
    );
  }

  /** One page of the entries matching the filter, newest first, and how many match in all. */
  async listPage(
    filter: AuditLogFilter,
    page: number,
    limit: number,
  ): Promise<{ rows: AuditLogRow[]; total: number }> {
    const where = whereOf(filter);
    const [listed, counted] = await Promise.all([
      this.knex.raw<{ rows: AuditLogRow[] }>(
        `select ${ROW_COLUMNS} from audit_log where ${where.sql} order by audit_log.id desc limit ? offset ?`,
        [...where.bindings, limit, (page - 1) * limit],
      ),
      this.knex.raw<{ rows: { total: number }[] }>(
        `select count(*)::int as total from audit_log where ${where.sql}`,
        where.bindings,
      ),
    ]);
    return { rows: listed.rows, total: counted.rows[0].total };
  }
}
