import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { READABLE_ENDPOINT } from '../access/access-sql';
import { ISSUE_COLUMNS, ISSUE_JOINS, type Issue, type IssueRow, type IssueStatus, issueOf } from './issue';
import { sqlOf } from '../database/write-transaction';

/** The most issues a list answers (the most recently failing). */
export const ISSUE_LIST_LIMIT = 500;

/**
 * The API's queries of issues. A list shows the issues of the endpoints the user may read; a route that
 * names an issue reaches these only once the access guard has found the caller's grant on it.
 */
@Injectable()
export class IssuesRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex() {
    return sqlOf(this.em);
  }

  /** The issues of the endpoints the user may read, the most recently failing first. */
  async listReadable(
    userId: string,
    filters: { status?: IssueStatus; endpointId?: string },
  ): Promise<Issue[]> {
    const { rows } = await this.knex.raw<{ rows: IssueRow[] }>(
      `select ${ISSUE_COLUMNS} from issues i ${ISSUE_JOINS}
       where ${READABLE_ENDPOINT} and (?::text is null or i.status = ?) and (?::uuid is null or i.endpoint_id = ?)
       order by i.last_seen_at desc, i.id limit ?`,
      [
        userId,
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

  async find(id: string): Promise<Issue | null> {
    const { rows } = await this.knex.raw<{ rows: IssueRow[] }>(
      `select ${ISSUE_COLUMNS} from issues i ${ISSUE_JOINS} where i.id = ?`,
      [id],
    );
    return rows[0] ? issueOf(rows[0]) : null;
  }

  /**
   * Sets the status of the issue unless it is resolved already (a resolved issue stays so: the next failure
   * of its kind opens a new one). Answers the issue as it is now, or null when it is gone.
   */
  async setStatus(id: string, status: IssueStatus): Promise<Issue | null> {
    await this.knex.raw(
      `update issues set status = ?, resolved_at = case when ? = 'resolved' then now() else null end
       where id = ? and status <> 'resolved' and status <> ?`,
      [status, status, id, status],
    );
    return this.find(id);
  }
}
