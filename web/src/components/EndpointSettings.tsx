import { useState } from 'preact/hooks';
import { updateEndpoint } from '../api/endpoints';
import { plural } from '../format';
import { useBusyAction, useTeams } from '../hooks';
import { canWrite, moveTargets, ROLE_TEXT } from '../roles';
import { href } from '../router';
import { announceTeamsChanged } from '../teams';
import type { Endpoint, EndpointSettings as Changes } from '../types';
import { Alert } from './Alert';
import { InputField, SelectField } from './Field';

/** The longest retention the API accepts, in days (ten years). */
const MAX_RETENTION_DAYS = 3650;

interface Props {
  endpoint: Endpoint;
  onSaved: (endpoint: Endpoint) => void;
}

/**
 * Which team the endpoint belongs to and how long its events are kept. Moving it out of a team needs an
 * admin's role there (back to personal, it becomes the mover's own), into a team a member's role there;
 * the retention, a member's role.
 */
export function EndpointSettings({ endpoint, onSaved }: Props) {
  const { teams } = useTeams();
  const [teamId, setTeamId] = useState(endpoint.team_id ?? '');
  const [retention, setRetention] = useState(endpoint.retention_days?.toString() ?? '');
  const [saved, setSaved] = useState(false);
  const { busy, error, run } = useBusyAction();
  const targets = moveTargets(endpoint, teams ?? []);
  const mayMove = targets !== null;
  const mayEdit = canWrite(endpoint.role);
  const currentTeam = teams?.find((team) => team.id === endpoint.team_id) ?? null;

  const changes = (): Changes => {
    const next: Changes = {};
    if (mayMove && teamId !== (endpoint.team_id ?? '')) next.team_id = teamId || null;
    const days = retention.trim() === '' ? null : Number(retention);
    if (days !== (endpoint.retention_days ?? null)) next.retention_days = days;
    return next;
  };

  const save = (event: Event) => {
    event.preventDefault();
    setSaved(false);
    const next = changes();
    if (Object.keys(next).length === 0) return;
    void run(async () => {
      const updated = await updateEndpoint(endpoint.id, next);
      onSaved(updated);
      setSaved(true);
      // The team's endpoint count and the switcher's lists follow a move.
      if ('team_id' in next) announceTeamsChanged();
    });
  };

  return (
    <section class="card" aria-labelledby="settings-heading" data-testid="endpoint-settings">
      <div class="card-head">
        <h2 id="settings-heading">Team and retention</h2>
      </div>
      {mayEdit && (
        <form class="settings-form" onSubmit={save} aria-label="Endpoint settings">
          {mayMove && (
            <SelectField
              id="endpoint-team"
              label="Team"
              value={teamId}
              options={[
                ['', 'None: your own'],
                ...(targets ?? []).map((team) => [team.id, team.name] as const),
              ]}
              hint="A team’s members reach its endpoints by their role."
              onChange={setTeamId}
            />
          )}
          <InputField
            id="endpoint-retention"
            label="Keep events (days)"
            type="number"
            min={1}
            max={MAX_RETENTION_DAYS}
            placeholder="the plan’s"
            value={retention}
            hint="Shortens the plan’s retention; empty keeps the plan’s. Dead letters are always kept."
            onInput={setRetention}
          />
          <button type="submit" class="btn btn-primary" data-testid="save-endpoint-settings" disabled={busy}>
            {busy ? 'Saving…' : 'Save'}
          </button>
        </form>
      )}
      <dl class="facts facts-compact">
        <div>
          <dt>Team</dt>
          <dd data-testid="endpoint-team-name">
            {endpoint.team_id === null ? (
              'None: personal'
            ) : (
              <a href={href.team(endpoint.team_id)}>{currentTeam?.name ?? 'Team'}</a>
            )}
          </dd>
        </div>
        <div>
          <dt>Your role</dt>
          <dd data-testid="endpoint-role" data-role={endpoint.role}>
            {ROLE_TEXT[endpoint.role].label}
          </dd>
        </div>
        <div>
          <dt>Events kept</dt>
          <dd data-testid="endpoint-retention-value">
            {endpoint.retention_days === null
              ? 'as long as the plan keeps them'
              : `at most ${plural(endpoint.retention_days, 'day')}`}
          </dd>
        </div>
      </dl>
      {saved && !busy && error === null && (
        <p class="alert alert-success" role="status">
          Saved.
        </p>
      )}
      <Alert error={error} testId="endpoint-settings-error" />
    </section>
  );
}
