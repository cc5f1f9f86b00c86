import { useState } from 'preact/hooks';
import { ApiError } from '../api/errors';
import { createTeam } from '../api/teams';
import { localTime, plural } from '../format';
import { useBusyAction, useDocumentTitle, useTeams } from '../hooks';
import { ROLE_TEXT } from '../roles';
import { href, navigate } from '../router';
import { announceTeamsChanged } from '../teams';
import type { Team } from '../types';
import { Alert } from './Alert';

/** The caller's teams, each a link to its page, and a form to create one (team plan). */
export function TeamsPage() {
  useDocumentTitle('Teams');
  const { teams, error } = useTeams();
  return (
    <div class="page">
      <div class="page-head">
        <h1 tabIndex={-1} data-autofocus>
          Teams
        </h1>
        <p class="muted">
          A team shares endpoints among its members, each with a role: viewers read, members also change
          endpoints and replay, admins also manage members, owners also delete the team.
        </p>
      </div>
      <CreateTeamForm />
      <section aria-labelledby="teams-heading">
        <h2 id="teams-heading" class="section-title">
          Your teams{teams ? ` (${teams.length})` : ''}
        </h2>
        <Alert error={error} />
        {!teams && !error && (
          <p class="muted" aria-busy="true">
            Loading teams…
          </p>
        )}
        {teams?.length === 0 && (
          <div class="empty" data-testid="teams-empty">
            <p>
              <strong>You are in no team yet.</strong> Create one above, or accept an invitation from a team’s
              admin: its link arrives by email.
            </p>
          </div>
        )}
        {teams && teams.length > 0 && (
          <ul class="team-list" data-testid="teams-list">
            {teams.map((team) => (
              <TeamRow key={team.id} team={team} />
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

function TeamRow({ team }: { team: Team }) {
  return (
    <li class="team-row" data-testid="team-row" data-team-id={team.id}>
      <a class="team-name" href={href.team(team.id)} data-testid="team-link">
        {team.name}
      </a>
      <span class="badge badge-role" data-testid="team-role" data-role={team.role}>
        {ROLE_TEXT[team.role].label}
      </span>
      <span class="muted small">
        {plural(team.member_count, 'member')} · created {localTime(team.created_at)}
      </span>
    </li>
  );
}

/** A new team, of which the caller is the owner; below the team plan, the API's 403 says to upgrade. */
function CreateTeamForm() {
  const [name, setName] = useState('');
  const { busy, error, run } = useBusyAction();
  const upgrade = error instanceof ApiError && error.upgradeRequired;

  const create = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      const team = await createTeam(name.trim());
      announceTeamsChanged();
      navigate(href.team(team.id));
    });
  };

  return (
    <section class="card" aria-labelledby="create-team-heading">
      <h2 id="create-team-heading">New team</h2>
      <form class="inline-form" onSubmit={create}>
        <div class="field grow">
          <label for="new-team-name">Name</label>
          <input
            id="new-team-name"
            data-testid="new-team-name"
            type="text"
            required
            maxLength={100}
            placeholder="e.g. Payments"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </div>
        <button type="submit" class="btn btn-primary" data-testid="create-team" disabled={busy}>
          {busy ? 'Creating…' : 'Create team'}
        </button>
      </form>
      {upgrade ? (
        <div class="alert alert-upgrade" role="alert" data-testid="team-upgrade">
          <p>
            <strong>Teams are on the Team plan.</strong> Upgrade your plan to share endpoints with your
            colleagues, each with a role. You can still join a team you are invited to.
          </p>
        </div>
      ) : (
        <Alert error={error} testId="create-team-error" />
      )}
    </section>
  );
}
