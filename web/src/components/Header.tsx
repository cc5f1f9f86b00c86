import { useState } from 'preact/hooks';
import { logout } from '../api';
import { plural } from '../format';
import { useOpenIssueCount } from '../hooks';
import { href, type Route } from '../router';
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
  return (
    <header class="topbar">
      <div class="topbar-inner">
        <a class="brand" href={href.endpoints()}>
          <span class="brand-mark" aria-hidden="true">
            ⤷
          </span>{' '}
          Hooktrail
        </a>
        <nav aria-label="Main">
          <a href={href.endpoints()} aria-current={route.name === 'endpoints' ? 'page' : undefined}>
            Endpoints
          </a>
          <a
            href={href.issues()}
            aria-current={route.name === 'issues' ? 'page' : undefined}
            aria-label={openIssues ? `Issues (${plural(openIssues, 'open issue')})` : undefined}
          >
            Issues
            {openIssues !== null && openIssues > 0 && (
              <span class="nav-count" data-testid="open-issues-count" aria-hidden="true">
                {openIssues}
              </span>
            )}
          </a>
          <a href={href.notifications()} aria-current={route.name === 'notifications' ? 'page' : undefined}>
            Notifications
          </a>
          <a href={href.apiKeys()} aria-current={route.name === 'api-keys' ? 'page' : undefined}>
            API keys
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
