import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Plan } from '../common/plans';
import type { Role } from './roles';

/** The kinds of resource a route may name in its path. */
export type ResourceKind = 'endpoint' | 'issue' | 'team' | 'notification_channel' | 'api_key';

/** What the caller is to one resource: their role, and the plan of the account the resource belongs to. */
export interface Grant {
  role: Role;
  /** The owner's plan for one's own resources; `team` for a team's. */
  plan: Plan;
  teamId: string | null;
  endpointId: string | null;
  /**
   * Whether the caller may change the resource (AccessService decides): their role holds its kind's
   * write permission and they did not come with a read-only API key. Only such a caller is shown its
   * secrets (a destination's signing secret).
   */
  mayWrite: boolean;
}

/** A grant as the database answers it, before the caller's credential is weighed. */
export type StoredGrant = Omit<Grant, 'mayWrite'>;

/**
 * Each query takes two parameters, the caller's id then the resource's id, and names them `caller.id`
 * and `target.id`; it returns one row when the caller may reach the resource, none otherwise.
 */
const PARAMETERS = `with caller as (select ?::uuid as id), target as (select ?::uuid as id)`;

/** An endpoint's grant: its owner's outside a team, the caller's role in its team otherwise. */
const ENDPOINT_GRANT = `
  case when ep.team_id is null then 'owner' else tm.role end as role,
  case when ep.team_id is null then u.plan else 'team' end as plan,
  ep.team_id, ep.id as endpoint_id
  from caller, target, endpoints ep
  join users u on u.id = ep.user_id
  left join team_members tm on tm.team_id = ep.team_id and tm.user_id = (select id from caller)`;

const VISIBLE_ENDPOINT = `((ep.team_id is null and ep.user_id = caller.id) or tm.user_id is not null)`;

/** The owner's grant of a per-user resource (`r`): only its owner reaches it. */
const OWN = (table: string) => `select 'owner' as role, u.plan, null as team_id, null as endpoint_id
  from caller, target, ${table} r join users u on u.id = r.user_id where r.id = target.id and r.user_id = caller.id`;

const GRANT_QUERIES: Record<ResourceKind, string> = {
  endpoint: `select ${ENDPOINT_GRANT} where ep.id = target.id and ${VISIBLE_ENDPOINT}`,
  issue: `select ${ENDPOINT_GRANT} join issues i on i.endpoint_id = ep.id where i.id = target.id and ${VISIBLE_ENDPOINT}`,
  team: `select tm.role, 'team' as plan, tm.team_id, null as endpoint_id from caller, target, team_members tm
         where tm.team_id = target.id and tm.user_id = caller.id`,
  notification_channel: OWN('notification_channels'),
  api_key: OWN('api_keys'),
};

interface GrantRow {
  role: Role;
  plan: Plan;
  team_id: string | null;
  endpoint_id: string | null;
}

/**
 * The single place that knows who may reach what (in the way of immich's access repository): every
 * ownership and membership question of the API is one of these queries.
 */
@Injectable()
export class AccessRepository {
  constructor(private readonly em: EntityManager) {}

  async grantOf(userId: string, kind: ResourceKind, id: string): Promise<StoredGrant | null> {
    const [row] = await this.em.execute<GrantRow[]>(`${PARAMETERS} ${GRANT_QUERIES[kind]}`, [userId, id]);
    return row ? { role: row.role, plan: row.plan, teamId: row.team_id, endpointId: row.endpoint_id } : null;
  }

  /** Whether an API key still stands: not revoked (deleted), not expired. */
  async apiKeyStands(keyId: string): Promise<boolean> {
    const rows = await this.em.execute<unknown[]>(
      `select 1 from api_keys where id = ? and (expires_at is null or expires_at > now())`,
      [keyId],
    );
    return rows.length > 0;
  }

  /** The user's role in each of their teams, by team id. */
  async teamRoles(userId: string): Promise<Map<string, Role>> {
    const rows = await this.em.execute<{ team_id: string; role: Role }[]>(
      `select team_id, role from team_members where user_id = ?`,
      [userId],
    );
    return new Map(rows.map((row) => [row.team_id, row.role]));
  }
}
