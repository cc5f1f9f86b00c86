import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { InvitableRole } from '../access/roles';
import type { Knex } from '../database/sql';
import { type TeamInvitation, teamInvitationOf, type TeamInvitationRow } from './team';
import { sqlOf } from '../database/write-transaction';

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = '23505';

const INVITATION_COLUMNS = `id, team_id, email, role, expires_at, created_at`;

/** Not accepted yet and not expired: the invitation (aliased `alias`) whose token still works. */
const pending = (alias: string) => `${alias}.accepted_at is null and ${alias}.expires_at > now()`;

/** What a new invitation's mail needs besides its token. */
export interface InvitationToSend {
  invitation: TeamInvitation;
  teamName: string;
  inviterName: string;
}

/** What became of an attempt to accept an invitation. */
export type AcceptOutcome =
  | { outcome: 'accepted'; teamId: string }
  /** The token is unknown, used, revoked or expired. */
  | { outcome: 'invalid' }
  /** The invitation is for another email address than the caller's. */
  | { outcome: 'wrong_recipient' }
  | { outcome: 'already_member' };

/** Every query of team invitations. */
@Injectable()
export class TeamInvitationsRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex(): Knex {
    return sqlOf(this.em);
  }

  /** Pending invitations of the team to addresses other than `email`. */
  async countPendingExcept(teamId: string, email: string): Promise<number> {
    const { rows } = await this.knex.raw<{ rows: { count: number }[] }>(
      `select count(*)::int as count from team_invitations i where i.team_id = ? and i.email <> ? and ${pending('i')}`,
      [teamId, email],
    );
    return rows[0].count;
  }

  async create(input: {
    teamId: string;
    email: string;
    role: InvitableRole;
    tokenHash: string;
    invitedBy: string;
    validDays: number;
  }): Promise<InvitationToSend> {
    const { rows } = await this.knex.raw<{
      rows: (TeamInvitationRow & { team_name: string; inviter_name: string })[];
    }>(
      `with created as (
         insert into team_invitations (team_id, email, role, token_hash, invited_by, expires_at)
         values (?, ?, ?, ?, ?, now() + make_interval(days => ?)) returning ${INVITATION_COLUMNS}, invited_by)
       select created.*, t.name as team_name, u.name as inviter_name
       from created join teams t on t.id = created.team_id join users u on u.id = created.invited_by`,
      [input.teamId, input.email, input.role, input.tokenHash, input.invitedBy, input.validDays],
    );
    const [row] = rows;
    return { invitation: teamInvitationOf(row), teamName: row.team_name, inviterName: row.inviter_name };
  }

  /** The team's pending invitations, newest first. */
  async listPending(teamId: string): Promise<TeamInvitation[]> {
    const { rows } = await this.knex.raw<{ rows: TeamInvitationRow[] }>(
      `select ${INVITATION_COLUMNS} from team_invitations i where i.team_id = ? and ${pending('i')}
       order by i.created_at desc, i.id`,
      [teamId],
    );
    return rows.map(teamInvitationOf);
  }

  /** Deletes the team's invitation unless it was accepted (its token stops working); answers whether it did. */
  async revoke(teamId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.knex.raw(
      `delete from team_invitations where team_id = ? and id = ? and accepted_at is null`,
      [teamId, id],
    );
    return rowCount > 0;
  }

  /** Revokes the team's other unaccepted invitations to the address of `current`: one link per address works. */
  async revokeOthers(current: TeamInvitation): Promise<void> {
    await this.knex.raw(
      `delete from team_invitations where team_id = ? and email = ? and id <> ? and accepted_at is null`,
      [current.teamId, current.email, current.id],
    );
  }

  /**
   * Accepts the invitation of `tokenHash` for the user: one conditional UPDATE marks it used only while it
   * is pending, addressed to the user's email (both stored lower-cased) and they are not a member yet, so
   * that of two concurrent accepts exactly one wins; the membership is written in the same transaction.
   */
  async accept(tokenHash: string, userId: string): Promise<AcceptOutcome> {
    try {
      return await this.knex.transaction(async (trx) => {
        const { rows } = await trx.raw<{ rows: { team_id: string; role: InvitableRole }[] }>(
          `update team_invitations i set accepted_at = now()
           from users u
           where i.token_hash = ? and u.id = ? and i.email = u.email and ${pending('i')}
             and not exists (select 1 from team_members m where m.team_id = i.team_id and m.user_id = u.id)
           returning i.team_id, i.role`,
          [tokenHash, userId],
        );
        if (!rows[0]) return this.whyNotAccepted(trx, tokenHash, userId);
        // A concurrent accept of another invitation to the same team violates the primary key: rolled back.
        await trx.raw(`insert into team_members (team_id, user_id, role) values (?, ?, ?)`, [
          rows[0].team_id,
          userId,
          rows[0].role,
        ]);
        return { outcome: 'accepted', teamId: rows[0].team_id };
      });
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) return { outcome: 'already_member' };
      throw error;
    }
  }

  private async whyNotAccepted(trx: Knex, tokenHash: string, userId: string): Promise<AcceptOutcome> {
    const { rows } = await trx.raw<{ rows: { pending: boolean; for_caller: boolean }[] }>(
      `select (${pending('i')}) as pending, i.email = u.email as for_caller
       from team_invitations i, users u where i.token_hash = ? and u.id = ?`,
      [tokenHash, userId],
    );
    const [invitation] = rows;
    if (!invitation?.pending) return { outcome: 'invalid' };
    if (!invitation.for_caller) return { outcome: 'wrong_recipient' };
    return { outcome: 'already_member' };
  }
}
