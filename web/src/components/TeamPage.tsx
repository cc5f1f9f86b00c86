import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, isAbortError } from '../api/errors';
import { currentUser } from '../api/session';
import {
  deleteTeam,
  getTeam,
  inviteMember,
  listInvitations,
  listMembers,
  removeMember,
  renameTeam,
  revokeInvitation,
  setMemberRole,
} from '../api/teams';
import { localTime, plural } from '../format';
import { useBusyAction, useDocumentTitle } from '../hooks';
import { assignableRoles, canManage, canRemoveMember, isOwner, ROLE_TEXT } from '../roles';
import { href, navigate } from '../router';
import { showTeamEndpoints } from '../team-scope';
import { announceTeamsChanged } from '../teams';
import { type Invitation, INVITABLE_ROLES, type Role, type Team, type TeamMember } from '../types';
import { Alert } from './Alert';
import { ConfirmActionDialog } from './ConfirmActionDialog';
import { InputField, SelectField } from './Field';

/** What the page's one confirmation dialog asks, and what it does once confirmed. */
interface Confirmation {
  title: string;
  text: ComponentChildren;
  confirmLabel: string;
  action: () => Promise<unknown>;
  /** Runs after the action succeeded (the dialog is closed). */
  then: () => void;
}

interface TeamData {
  team: Team;
  members: TeamMember[];
  /** Pending invitations; null for those who may not see them (below admin). */
  invitations: Invitation[] | null;
}

/** The team, its members and (for admins) its pending invitations; `reload` after every change. */
function useTeamData(teamId: string): { data: TeamData | null; error: unknown; reload: () => void } {
  const [data, setData] = useState<TeamData | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    (async () => {
      const [team, members] = await Promise.all([getTeam(teamId, signal), listMembers(teamId, signal)]);
      const invitations = canManage(team.role) ? await listInvitations(teamId, signal) : null;
      setData({ team, members, invitations });
      setError(null);
    })().catch((err) => {
      if (!isAbortError(err)) setError(err);
    });
    return () => controller.abort();
  }, [teamId, version]);
  const reload = useCallback(() => setVersion((n) => n + 1), []);
  return { data, error, reload };
}

/**
 * One team: its members and their roles, invitations, rename, leave and delete. What the caller's role
 * does not allow is not shown: members and viewers see the members; admins manage them and invite;
 * owners also delete the team and make owners.
 */
export function TeamPage({ id }: { id: string }) {
  const { data, error, reload } = useTeamData(id);
  const [confirm, setConfirm] = useState<Confirmation | null>(null);
  const [announcement, setAnnouncement] = useState('');
  useDocumentTitle(data?.team.name ?? 'Team');
  const closeConfirm = useCallback(() => setConfirm(null), []);

  const changed = (text: string) => {
    setAnnouncement(text);
    announceTeamsChanged();
    reload();
  };

  if (!data) {
    const missing = error instanceof ApiError && error.status === 404;
    return (
      <div class="page">
        <Breadcrumbs />
        {error ? (
          <>
            <h1 tabIndex={-1} data-autofocus>
              {missing ? 'Team not found' : 'Could not load this team'}
            </h1>
            {missing ? <p>It does not exist, or you are not one of its members.</p> : <Alert error={error} />}
            <p>
              <a href={href.teams()}>Back to your teams</a>
            </p>
          </>
        ) : (
          <p class="muted" aria-busy="true">
            Loading team…
          </p>
        )}
      </div>
    );
  }

  const { team, members, invitations } = data;
  const me = currentUser()?.id;
  /** The caller is out of the team (left it, or deleted it): back to the teams. */
  const gone = () => {
    announceTeamsChanged();
    navigate(href.teams());
  };
  const leave = () =>
    setConfirm({
      title: 'Leave this team?',
      text: (
        <p>
          You lose access to <strong>{team.name}</strong> and its endpoints at once. An admin can invite you
          again.
        </p>
      ),
      confirmLabel: 'Leave team',
      action: () => removeMember(team.id, me ?? ''),
      then: gone,
    });
  const remove = (member: TeamMember) =>
    setConfirm({
      title: 'Remove this member?',
      text: (
        <p>
          <strong>{member.user.email}</strong> loses access to {team.name} and its endpoints at once.
        </p>
      ),
      confirmLabel: 'Remove member',
      action: () => removeMember(team.id, member.user.id),
      then: () => changed(`${member.user.email} removed.`),
    });
  const revoke = (invitation: Invitation) =>
    setConfirm({
      title: 'Revoke this invitation?',
      text: (
        <p>
          The link sent to <strong>{invitation.email}</strong> stops working.
        </p>
      ),
      confirmLabel: 'Revoke invitation',
      action: () => revokeInvitation(team.id, invitation.id),
      then: () => changed(`Invitation to ${invitation.email} revoked.`),
    });
  const confirmDeleteTeam = () =>
    setConfirm({
      title: 'Delete this team?',
      text: (
        <p>
          <strong>{team.name}</strong> and its {plural(members.length, 'membership')} are deleted. It must
          have no endpoints left: move them out or delete them first.
        </p>
      ),
      confirmLabel: 'Delete team',
      action: () => deleteTeam(team.id),
      then: gone,
    });

  return (
    <div class="page" data-testid="team-page" data-team-id={team.id} data-role={team.role}>
      <Breadcrumbs name={team.name} />
      <TeamHead team={team} onRenamed={() => changed('Team renamed.')} />
      <div class="toolbar team-actions">
        <button
          type="button"
          class="btn btn-primary"
          data-testid="team-endpoints"
          onClick={() => showTeamEndpoints(team.id)}
        >
          Show its endpoints
        </button>
        <button type="button" class="btn" data-testid="leave-team" onClick={leave}>
          Leave team
        </button>
        {isOwner(team.role) && (
          <button
            type="button"
            class="btn btn-danger-outline"
            data-testid="delete-team"
            onClick={confirmDeleteTeam}
          >
            Delete team
          </button>
        )}
      </div>
      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>
      <Members
        team={team}
        members={members}
        me={me}
        onRoleChanged={(member, role) => changed(`${member.user.email} is now ${ROLE_TEXT[role].label}.`)}
        onRemove={remove}
      />
      {invitations && (
        <Invitations
          team={team}
          invitations={invitations}
          onInvited={(invitation) => changed(`Invitation sent to ${invitation.email}.`)}
          onRevoke={revoke}
        />
      )}
      <ConfirmActionDialog
        target={confirm}
        title={confirm?.title ?? ''}
        confirmLabel={confirm?.confirmLabel ?? ''}
        confirmTestId="confirm-team-action"
        action={(confirmed) => confirmed.action()}
        onDone={(confirmed) => {
          setConfirm(null);
          confirmed.then();
        }}
        onCancel={closeConfirm}
      >
        {confirm?.text}
      </ConfirmActionDialog>
    </div>
  );
}

function Breadcrumbs({ name }: { name?: string }) {
  return (
    <nav class="breadcrumbs" aria-label="Breadcrumb">
      <ol>
        <li>
          <a href={href.teams()}>Teams</a>
        </li>
        {name && (
          <li>
            <span aria-current="page">{name}</span>
          </li>
        )}
      </ol>
    </nav>
  );
}

/** The team's name (renamed in place by its admins), the caller's role and the team's endpoints. */
function TeamHead({ team, onRenamed }: { team: Team; onRenamed: () => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  const { busy, error, run } = useBusyAction();

  const save = (event: Event) => {
    event.preventDefault();
    const name = draft?.trim() ?? '';
    if (name === team.name) return setDraft(null);
    void run(async () => {
      await renameTeam(team.id, name);
      setDraft(null);
      onRenamed();
    });
  };

  return (
    <div class="page-head">
      {draft === null ? (
        <div class="team-title">
          <h1 tabIndex={-1} data-autofocus data-testid="team-name">
            {team.name}
          </h1>
          {canManage(team.role) && (
            <button
              type="button"
              class="btn btn-small btn-ghost"
              data-testid="rename-team"
              onClick={() => setDraft(team.name)}
            >
              Rename
            </button>
          )}
        </div>
      ) : (
        <form class="inline-form" onSubmit={save} aria-label="Rename the team">
          <InputField
            id="team-rename"
            label="Team name"
            grow
            maxLength={100}
            value={draft}
            onInput={setDraft}
          />
          <button type="submit" class="btn btn-primary" data-testid="rename-team-save" disabled={busy}>
            {busy ? 'Saving…' : 'Save'}
          </button>
          <button type="button" class="btn" onClick={() => setDraft(null)} disabled={busy}>
            Cancel
          </button>
        </form>
      )}
      <Alert error={error} />
      <p class="muted">
        Your role:{' '}
        <strong data-testid="team-my-role" data-role={team.role}>
          {ROLE_TEXT[team.role].label}
        </strong>{' '}
        — {ROLE_TEXT[team.role].can}.
      </p>
    </div>
  );
}

interface MembersProps {
  team: Team;
  members: TeamMember[];
  /** The caller's user id. */
  me: string | undefined;
  onRoleChanged: (member: TeamMember, role: Role) => void;
  onRemove: (member: TeamMember) => void;
}

function Members({ team, members, me, onRoleChanged, onRemove }: MembersProps) {
  return (
    <section class="card" aria-labelledby="members-heading">
      <div class="card-head">
        <h2 id="members-heading">Members</h2>
        <span class="muted small">{plural(members.length, 'member')}</span>
      </div>
      <ul class="member-list" data-testid="members-list">
        {members.map((member) => (
          <MemberRow
            key={member.user.id}
            team={team}
            member={member}
            self={member.user.id === me}
            onRoleChanged={onRoleChanged}
            onRemove={onRemove}
          />
        ))}
      </ul>
    </section>
  );
}

interface MemberRowProps {
  team: Team;
  member: TeamMember;
  self: boolean;
  onRoleChanged: (member: TeamMember, role: Role) => void;
  onRemove: (member: TeamMember) => void;
}

/** A member: the role as a select for who may change it (else as text), and Remove for who may. */
function MemberRow({ team, member, self, onRoleChanged, onRemove }: MemberRowProps) {
  const { busy, error, run } = useBusyAction();
  const choices = assignableRoles(team.role, member.role);
  const { user } = member;
  const selectId = `member-role-${user.id}`;

  const change = (role: Role) =>
    run(async () => {
      await setMemberRole(team.id, user.id, role);
      onRoleChanged(member, role);
    });

  return (
    <li class="member-row" data-testid="member-row" data-user-id={user.id} data-role={member.role}>
      <div class="member-who">
        <strong>{user.name || user.email}</strong>
        {self && <span class="muted small"> (you)</span>}
        <br />
        <span class="muted small" data-testid="member-email">
          {user.email}
        </span>
      </div>
      <div class="member-role">
        {choices.length > 0 ? (
          <>
            <label class="sr-only" for={selectId}>
              Role of {user.email}
            </label>
            <select
              id={selectId}
              data-testid="member-role-select"
              value={member.role}
              disabled={busy}
              onChange={(event) => void change(event.currentTarget.value as Role)}
            >
              {choices.map((role) => (
                <option key={role} value={role}>
                  {ROLE_TEXT[role].label}
                </option>
              ))}
            </select>
          </>
        ) : (
          <span class="badge badge-role" data-testid="member-role" data-role={member.role}>
            {ROLE_TEXT[member.role].label}
          </span>
        )}
      </div>
      <span class="muted small">joined {localTime(member.joined_at)}</span>
      <div class="member-actions">
        {!self && canRemoveMember(team.role, member.role) && (
          <button
            type="button"
            class="btn btn-small btn-danger-outline"
            data-testid="remove-member"
            aria-label={`Remove ${user.email}`}
            onClick={() => onRemove(member)}
          >
            Remove
          </button>
        )}
      </div>
      {error !== null && (
        <div class="row-error">
          <Alert error={error} />
        </div>
      )}
    </li>
  );
}

interface InvitationsProps {
  team: Team;
  invitations: Invitation[];
  onInvited: (invitation: Invitation) => void;
  onRevoke: (invitation: Invitation) => void;
}

/** The invitation form, and the invitations not accepted yet (admins and owners only). */
function Invitations({ team, invitations, onInvited, onRevoke }: InvitationsProps) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Invitation['role']>('member');
  const { busy, error, run } = useBusyAction();

  const invite = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      onInvited(await inviteMember(team.id, { email: email.trim(), role }));
      setEmail('');
    });
  };

  return (
    <section class="card" aria-labelledby="invitations-heading">
      <div class="card-head">
        <h2 id="invitations-heading">Invitations</h2>
        <span class="muted small">A link by email, valid 7 days, used once</span>
      </div>
      <form class="inline-form" onSubmit={invite} aria-label="Invite a member">
        <div class="field grow">
          <label for="invite-email">Email</label>
          <input
            id="invite-email"
            data-testid="invite-email"
            type="email"
            required
            maxLength={254}
            placeholder="colleague@example.com"
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </div>
        <SelectField
          id="invite-role"
          label="Role"
          value={role}
          options={INVITABLE_ROLES.map((option) => [option, ROLE_TEXT[option].label] as const)}
          onChange={setRole}
        />
        <button type="submit" class="btn btn-primary" data-testid="send-invitation" disabled={busy}>
          {busy ? 'Sending…' : 'Send invitation'}
        </button>
      </form>
      <p class="hint">
        {ROLE_TEXT[role].label} — {ROLE_TEXT[role].can}.
      </p>
      <Alert error={error} testId="invite-error" />
      {invitations.length === 0 ? (
        <p class="muted" data-testid="invitations-empty">
          No pending invitations.
        </p>
      ) : (
        <ul class="member-list" data-testid="invitations-list">
          {invitations.map((invitation) => (
            <li
              key={invitation.id}
              class="member-row"
              data-testid="invitation-row"
              data-invitation-id={invitation.id}
            >
              <div class="member-who">
                <strong>{invitation.email}</strong>
              </div>
              <span class="badge badge-role" data-role={invitation.role}>
                {ROLE_TEXT[invitation.role].label}
              </span>
              <span class="muted small">
                sent {localTime(invitation.created_at)} · expires {localTime(invitation.expires_at)}
              </span>
              <div class="member-actions">
                <button
                  type="button"
                  class="btn btn-small btn-danger-outline"
                  data-testid="revoke-invitation"
                  aria-label={`Revoke the invitation to ${invitation.email}`}
                  onClick={() => onRevoke(invitation)}
                >
                  Revoke
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
