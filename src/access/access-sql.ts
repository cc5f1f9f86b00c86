/** SQL conditions of the access component that list and notification queries embed. */

/**
 * A subquery of the users who answer for an endpoint (aliased `ep`), to whom its alerts and notifications
 * go: its owner, or for a team's endpoint every owner and admin of the team, who run it (not its creator,
 * who may have left; the creator only should the team have neither). Members and viewers are not alerted.
 */
export const ENDPOINT_ACCOUNT_HOLDERS = `select tm.user_id from team_members tm
  where tm.team_id = ep.team_id and tm.role in ('owner', 'admin')
  union select ep.user_id where not exists (select 1 from team_members o
    where o.team_id = ep.team_id and o.role in ('owner', 'admin'))`;

/**
 * A condition (on endpoints aliased `ep`) true for the endpoints the user may read: their own outside
 * teams and every endpoint of their teams. Its two `?` both take the user's id.
 */
export const READABLE_ENDPOINT = `((ep.team_id is null and ep.user_id = ?)
  or ep.team_id in (select tm.team_id from team_members tm where tm.user_id = ?))`;
