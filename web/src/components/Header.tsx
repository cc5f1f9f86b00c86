import { useState } from 'preact/hooks';
import { logout } from '../api';
import { href } from '../router';
import type { User } from '../types';

export function Header({ user }: { user: User }) {
  const [busy, setBusy] = useState(false);
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
          <a href={href.endpoints()}>Endpoints</a>
        </nav>
        <div class="topbar-user">
          <span class="user-name" title={user.email}>
            {user.name || user.email}
          </span>
          <span class="plan" data-testid="user-plan" title="Your plan">
            {user.plan}
          </span>
          <button type="button" class="btn btn-small" data-testid="logout" onClick={onLogout} disabled={busy}>
            {busy ? 'Logging out…' : 'Log out'}
          </button>
        </div>
      </div>
    </header>
  );
}
