import { useState } from 'preact/hooks';
import { logout } from '../api/auth';
import { ApiError, errorMessages } from '../api/errors';
import { currentUser } from '../api/session';
import { acceptInvitation } from '../api/teams';
import { useBusyAction, useDocumentTitle } from '../hooks';
import { ROLE_TEXT } from '../roles';
import { href } from '../router';
import { showTeamEndpoints } from '../team-scope';
import { announceTeamsChanged } from '../teams';
import type { Team } from '../types';
import { Alert } from './Alert';

/**
 * The invitation mail's link. Logged out, the auth screen shows on this same address, so logging in or
 * signing up comes back here; logged in, the invitee accepts with one click (never on arrival: the
 * account in this browser may not be the one invited).
 */
export function InvitationPage({ token }: { token: string }) {
  useDocumentTitle('Team invitation');
  const [joined, setJoined] = useState<Team | null>(null);
  const { busy, error, run } = useBusyAction();
  const email = currentUser()?.email;

  const accept = () =>
    run(async () => {
      setJoined(await acceptInvitation(token));
      announceTeamsChanged();
    });
  if (joined) {
    return (
      <div class="page narrow" data-testid="invitation-accepted">
        <h1 tabIndex={-1} data-autofocus>
          You joined {joined.name}
        </h1>
        <p>
          Your role: <strong data-testid="joined-role">{ROLE_TEXT[joined.role].label}</strong> —{' '}
          {ROLE_TEXT[joined.role].can}.
        </p>
        <div class="toolbar">
          <button
            type="button"
            class="btn btn-primary"
            data-testid="open-team-endpoints"
            onClick={() => showTeamEndpoints(joined.id)}
          >
            Open its endpoints
          </button>
          <a class="btn" href={href.team(joined.id)}>
            See the team
          </a>
        </div>
      </div>
    );
  }

  return (
    <div class="page narrow" data-testid="invitation-page">
      <h1 tabIndex={-1} data-autofocus>
        Join a team
      </h1>
      {token ? (
        <>
          <p>
            You were invited to a team on Hooktrail. You are logged in as <strong>{email}</strong>: the
            invitation must have been sent to this address.
          </p>
          <div class="toolbar">
            <button
              type="button"
              class="btn btn-primary"
              data-testid="accept-invitation"
              onClick={() => void accept()}
              disabled={busy}
            >
              {busy ? 'Joining…' : 'Accept the invitation'}
            </button>
          </div>
          <AcceptError error={error} />
        </>
      ) : (
        <p class="alert alert-error" role="alert">
          This link has no invitation in it. Open the link of the invitation email as it is.
        </p>
      )}
    </div>
  );
}

/** Why the invitation could not be accepted, in words, and what to do about it. */
function AcceptError({ error }: { error: unknown }) {
  if (!(error instanceof ApiError)) return <Alert error={error} />;
  if (error.status === 400)
    return (
      <Alert
        testId="invitation-error"
        error={[
          'This invitation cannot be used: it was accepted or revoked already, or it expired (after 7 days).',
          'Ask the team’s admin for a new one.',
        ].join(' ')}
      />
    );
  if (error.status === 409)
    return (
      <div class="alert alert-info" role="status" data-testid="invitation-member-already">
        <p>
          You are a member of this team already. <a href={href.teams()}>See your teams</a>.
        </p>
      </div>
    );
  if (error.status === 403)
    return (
      <div class="alert alert-error" role="alert" data-testid="invitation-error">
        <p>
          This invitation was sent to another address. Log out, then log in (or sign up) with the address it
          was sent to: this page comes back.
        </p>
        {/* Logging out here keeps this address, so the auth screen brings the invitee back to it. */}
        <button
          type="button"
          class="btn btn-small"
          data-testid="invitation-logout"
          onClick={() => void logout()}
        >
          Log out
        </button>
        <p class="small">{errorMessages(error).join(' ')}</p>
      </div>
    );
  return <Alert error={error} testId="invitation-error" />;
}
