import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Role } from '../access/roles';
import type { Knex } from '../database/sql';
import { type Team, type TeamMember, type TeamMemberRow, teamMemberOf, teamOf, type TeamRow } from './team';
import { sqlOf } from '../database/write-transaction';

/** PostgreSQL's foreign_key_violation. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * A team as the member named by the first parameter sees it (`where` may name `t` and `tm`); teams of
 * which they are not a member are not found.
 */
const TEAM_OF_MEMBER = `select t.id, t.name, tm.role, t.created_at,
    (select count(*)::int from team_members m where m.team_id = t.id) as member_count
  from teams t join team_members tm on tm.team_id = t.id and tm.user_id = ?`;

const MEMBER_COLUMNS = `tm.user_id, u.email, u.name, tm.role, tm.created_at`;

/**
 * Every query of teams and their members. Which teams a caller may reach is decided before these run
 * (src/access); the queries that answer a caller's view of a team are still scoped by their membership.
 */
@Injectable()
export class TeamsRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex(): Knex {
    return sqlOf(this.em);
  }

  /** The team and its first member, its owner, in one statement. */
  async create(ownerId: string, name: string): Promise<Team> {
    const { rows } = await this.knex.raw<{ rows: TeamRow[] }>(
      `with team as (insert into teams (name) values (?) returning id, name, created_at),
         owner as (insert into team_members (team_id, user_id, role) select id, ?, 'owner' from team)
       select id, name, 'owner' as role, 1 as member_count, created_at from team`,
      [name, ownerId],
    );
    return teamOf(rows[0]);
  }

  /** The user's teams, oldest first. */
  async listOfMember(userId: string): Promise<Team[]> {
    const { rows } = await this.knex.raw<{ rows: TeamRow[] }>(
      `${TEAM_OF_MEMBER} order by t.created_at, t.id`,
      [userId],
    );
    return rows.map(teamOf);
  }

  async findOfMember(userId: string, teamId: string): Promise<Team | null> {
    const { rows } = await this.knex.raw<{ rows: TeamRow[] }>(`${TEAM_OF_MEMBER} where t.id = ?`, [
      userId,
      teamId,
    ]);
    return rows[0] ? teamOf(rows[0]) : null;
  }

  async rename(teamId: string, name: string): Promise<void> {
    await this.knex.raw(`update teams set name = ? where id = ?`, [name, teamId]);
  }

  /**
   * Deletes the team (its members and invitations go with it) unless endpoints belong to it; answers
   * whether it did. An endpoint created in the team while this runs makes the foreign key refuse.
   */
  async deleteUnlessItHasEndpoints(teamId: string): Promise<boolean> {
    try {
      const { rowCount } = await this.knex.raw(
        `delete from teams t where t.id = ? and not exists (select 1 from endpoints where team_id = t.id)`,
        [teamId],
      );
      return rowCount > 0;
    } catch (error) {
      if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) return false;
      throw error;
    }
  }

  async countEndpoints(teamId: string): Promise<number> {
    const { rows } = await this.knex.raw<{ rows: { count: number }[] }>(
      `select count(*)::int as count from endpoints where team_id = ?`,
      [teamId],
    );
    return rows[0].count;
  }

  /** The members, the earliest to join first. */
  async listMembers(teamId: string): Promise<TeamMember[]> {
    const { rows } = await this.knex.raw<{ rows: TeamMemberRow[] }>(
      `select ${MEMBER_COLUMNS} from team_members tm join users u on u.id = tm.user_id
       where tm.team_id = ? order by tm.created_at, u.email`,
      [teamId],
    );
    return rows.map(teamMemberOf);
  }

  /** Whether a member of the team has this (normalised) email. */
  async hasMemberWithEmail(teamId: string, email: string): Promise<boolean> {
    const { rows } = await this.knex.raw<{ rows: unknown[] }>(
      `select 1 from team_members tm join users u on u.id = tm.user_id where tm.team_id = ? and u.email = ?`,
      [teamId, email],
    );
    return rows.length > 0;
  }

  /**
   * Runs `work` holding the team's row lock, so that changes to its members are made one at a time: two
   * owners demoting each other at once must not leave the team without an owner.
   */
  withTeamLock<T>(teamId: string, work: (trx: Knex) => Promise<T>): Promise<T> {
    return this.knex.transaction(async (trx) => {
      await trx.raw(`select 1 from teams where id = ? for no key update`, [teamId]);
      return work(trx);
    });
  }

  /** Those of `userIds` who are members of the team, as they are now. */
  async membersAmong(trx: Knex, teamId: string, userIds: string[]): Promise<TeamMember[]> {
    const { rows } = await trx.raw<{ rows: TeamMemberRow[] }>(
      `select ${MEMBER_COLUMNS} from team_members tm join users u on u.id = tm.user_id
       where tm.team_id = ? and tm.user_id = any(?::uuid[])`,
      [teamId, userIds],
    );
    return rows.map(teamMemberOf);
  }

  async countOwners(trx: Knex, teamId: string): Promise<number> {
    const { rows } = await trx.raw<{ rows: { count: number }[] }>(
      `select count(*)::int as count from team_members where team_id = ? and role = 'owner'`,
      [teamId],
    );
    return rows[0].count;
  }

  async setRole(trx: Knex, teamId: string, userId: string, role: Role): Promise<void> {
    await trx.raw(`update team_members set role = ? where team_id = ? and user_id = ?`, [
      role,
      teamId,
      userId,
    ]);
  }

  async removeMember(trx: Knex, teamId: string, userId: string): Promise<void> {
    await trx.raw(`delete from team_members where team_id = ? and user_id = ?`, [teamId, userId]);
  }
}
