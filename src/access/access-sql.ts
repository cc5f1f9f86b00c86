/** SQL conditions of the access component that list and notification queries embed. */

/**
 * The user who answers for an endpoint (aliased `ep`), to whom its alerts and notifications go: its owner,
 * or for a team's endpoint the team's first owner (not its creator, who may have left the team).
 */
export const ENDPOINT_ACCOUNT_HOLDER = `coalesce((select tm.user_id from team_members tm
  where tm.team_id = ep.team_id and tm.role = 'owner' order by tm.created_at, tm.user_id limit 1), ep.user_id)`;

/**
 * A condition (on endpoints aliased `ep`) true for the endpoints the user may read: their own outside
 * teams and every endpoint of their teams. Its two `?` both take the user's id.
 */
export const READABLE_ENDPOINT = `((ep.team_id is null and ep.user_id = ?)
  or ep.team_id in (select tm.team_id from team_members tm where tm.user_id = ?))`;
