import { useEffect, useState } from 'preact/hooks';
import { href, navigate } from './router';
import type { Endpoint, Team } from './types';

/**
 * The header's team switcher: whose endpoints the endpoints list shows and where “New endpoint” creates
 * one. A team's id, or null for one's personal account. Kept in localStorage, so a reload or another tab
 * stays in the team chosen; the API answers personal and team endpoints together, so it is a filter on
 * this side only.
 */
export type Scope = string | null;

const KEY_SCOPE = 'hooktrail.scope';
const PERSONAL = 'personal';
const SCOPE_CHANGED = 'hooktrail:scope-changed';

export function readScope(): Scope {
  try {
    const stored = localStorage.getItem(KEY_SCOPE);
    return stored && stored !== PERSONAL ? stored : null;
  } catch {
    return null;
  }
}

export function saveScope(scope: Scope): void {
  try {
    localStorage.setItem(KEY_SCOPE, scope ?? PERSONAL);
  } catch {
    // Storage unavailable: the choice lasts as long as the page.
  }
  window.dispatchEvent(new CustomEvent<Scope>(SCOPE_CHANGED, { detail: scope }));
}

/**
 * The scope to show: the stored one while its team is among the caller's teams (or the teams are not
 * loaded yet), else personal (the caller left the team, was removed, or another user logged in here).
 */
export function effectiveScope(stored: Scope, teams: readonly Pick<Team, 'id'>[] | null): Scope {
  if (stored === null || teams === null) return stored;
  return teams.some((team) => team.id === stored) ? stored : null;
}

/** Switches the header to the team and opens its endpoints list. */
export function showTeamEndpoints(teamId: string): void {
  saveScope(teamId);
  navigate(href.endpoints());
}

/** Whether the endpoint belongs in the scope: its team's, or personal when it has none. */
export function inScope(endpoint: Pick<Endpoint, 'team_id'>, scope: Scope): boolean {
  return (endpoint.team_id ?? null) === scope;
}

/** The stored scope, followed as the switcher (here or in another tab) changes it. */
export function useStoredScope(): Scope {
  const [scope, setScope] = useState(readScope);
  useEffect(() => {
    const follow = () => setScope(readScope());
    const onStorage = (event: StorageEvent) => {
      if (event.key === KEY_SCOPE || event.key === null) follow();
    };
    window.addEventListener(SCOPE_CHANGED, follow);
    window.addEventListener('storage', onStorage);
    return () => {
      window.removeEventListener(SCOPE_CHANGED, follow);
      window.removeEventListener('storage', onStorage);
    };
  }, []);
  return scope;
}
