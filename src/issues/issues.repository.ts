import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Plan } from '../common/plans';
import { ISSUE_COLUMNS, ISSUE_JOINS, type Issue, type IssueRow, type IssueStatus, issueOf } from './issue';

/** The most issues a list answers (the most recently failing). */
export const ISSUE_LIST_LIMIT = 500;

/** The API's queries of issues, each scoped by the endpoint's owner (another user's issue is not found). */
@Injectable()
export class IssuesRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex() {
    return this.em.getKnex();
  }

  /** The owner's issues, the most recently failing first. */
  async listOwned(userId: string, filters: { status?: IssueStatus; endpointId?: string }): Promise<Issue[]> {
    const { rows } = await this.knex.raw<{ rows: IssueRow[] }>(
      `select ${ISSUE_COLUMNS} from issues i ${ISSUE_JOINS}
       where ep.user_id = ? and (?::text is null or i.status = ?) and (?::uuid is null or i.endpoint_id = ?)
       order by i.last_seen_at desc, i.id limit ?`,
      [
        userId,
        filters.status ?? null,
        filters.status ?? null,
        filters.endpointId ?? null,
        filters.endpointId ?? null,
        ISSUE_LIST_LIMIT,
      ],
    );
    return rows.map(issueOf);
  }

  async findOwned(userId: string, id: string): Promise<Issue | null> {
    const { rows } = await this.knex.raw<{ rows: IssueRow[] }>(
      `select ${ISSUE_COLUMNS} from issues i ${ISSUE_JOINS} where i.id = ? and ep.user_id = ?`,
      [id, userId],
    );
    return rows[0] ? issueOf(rows[0]) : null;
  }

  /**
   * Sets the status of the owner's issue unless it is resolved already (a resolved issue stays so: the next
   * failure of its kind opens a new one). Answers the issue as it is now, or null when it is not the owner's.
   */
  async setStatus(userId: string, id: string, status: IssueStatus): Promise<Issue | null> {
    await this.knex.raw(
      `update issues i set status = ?, resolved_at = case when ? = 'resolved' then now() else null end
       from endpoints ep
       where i.id = ? and ep.id = i.endpoint_id and ep.user_id = ? and i.status <> 'resolved'
         and i.status <> ?`,
      [status, status, id, userId, status],
    );
    return this.findOwned(userId, id);
  }

  /** The user's plan as it is now (a plan change applies at once, as for the plan guard). */
  async planOf(userId: string): Promise<Plan | null> {
    const { rows } = await this.knex.raw<{ rows: { plan: Plan }[] }>(`select plan from users where id = ?`, [
      userId,
    ]);
    return rows[0]?.plan ?? null;
  }
}
