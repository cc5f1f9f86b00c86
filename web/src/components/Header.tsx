import { useState } from 'preact/hooks';
import { logout } from '../api/auth';
import { plural } from '../format';
import { useOpenIssueCount, useScope } from '../hooks';
import { href, navigate, type Route } from '../router';
import { saveScope } from '../team-scope';
import type { User } from '../types';

export function Header({ user, route }: { user: User; route: Route }) {
  const [busy, setBusy] = useState(false);
  const openIssues = useOpenIssueCount();
  // logout() never rejects (the session ends locally whatever the server says): fire and forget.
  const onLogout = async () => {
    setBusy(true);
    await logout();
    window.location.hash = '/login';
  };
  const current = (...names: Route['name'][]) => (names.includes(route.name) ? 'page' : undefined);
  return (
    <header class="topbar">
      <div class="topbar-inner">
        <a class="brand" href={href.endpoints()}>
          <span class="brand-mark" aria-hidden="true">
            ⤷
          </span>{' '}
          Hooktrail
        </a>
        <TeamSwitcher route={route} />
        <nav aria-label="Main">
          <a href={href.endpoints()} aria-current={current('endpoints')}>
            Endpoints
          </a>
          <a
            href={href.issues()}
            aria-current={current('issues')}
            aria-label={openIssues ? `Issues (${plural(openIssues, 'open issue')})` : undefined}
          >
            Issues
            {openIssues !== null && openIssues > 0 && (
              <span class="nav-count" data-testid="open-issues-count" aria-hidden="true">
                {openIssues}
              </span>
            )}
          </a>
          <a href={href.notifications()} aria-current={current('notifications')}>
            Notifications
          </a>
          <a href={href.apiKeys()} aria-current={current('api-keys')}>
            API keys
          </a>
          <a href={href.teams()} aria-current={current('teams', 'team')}>
            Teams
          </a>
          <a href={href.auditLog()} aria-current={current('audit-log')}>
            Audit log
          </a>
        </nav>
        <div class="topbar-user">
          <span class="user-name" title={user.email}>
            {user.name || user.email}
          </span>
          <span class="plan" data-testid="user-plan" title="Your plan">
            {user.plan}
          </span>
          <button
            type="button"
            class="btn btn-small"
            data-testid="logout"
            onClick={() => void onLogout()}
            disabled={busy}
          >
            {busy ? 'Logging out…' : 'Log out'}
          </button>
        </div>
      </div>
    </header>
  );
}

/**
 * Personal or one of the caller's teams: the endpoints list shows that scope's endpoints and creates new
 * ones there. Shown once the caller is in a team; choosing one opens its endpoints list.
 */
function TeamSwitcher({ route }: { route: Route }) {
  const { teams, scope } = useScope();
  if (!teams || teams.length === 0) return null;
  const choose = (value: string) => {
    saveScope(value || null);
    if (route.name !== 'endpoints') navigate(href.endpoints());
  };
  return (
    <div class="team-switcher">
      <label for="team-switcher">Team</label>
      <select
        id="team-switcher"
        data-testid="team-switcher"
        value={scope ?? ''}
        onChange={(event) => choose(event.currentTarget.value)}
      >
        <option value="">Personal</option>
        {teams.map((team) => (
          <option key={team.id} value={team.id}>
            {team.name}
          </option>
        ))}
      </select>
    </div>
  );
}
