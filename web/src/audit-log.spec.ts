import {
  actionText,
  actorText,
  auditApiQuery,
  auditFiltersOf,
  auditFiltersQuery,
  changesText,
  targetText,
} from './audit-log';
import { parseHash } from './router';

/** The audit log page: its filters in the hash and for the API, and an entry in words. */
describe('audit log page', () => {
  const params = (query: string) => new URLSearchParams(query);

  it('reads the filters from the hash, page 1 by default', () => {
    expect(auditFiltersOf(params(''))).toEqual({ teamId: '', endpointId: '', page: 1 });
    expect(auditFiltersOf(params('team_id=t1&endpoint_id=e1&page=3'))).toEqual({
      teamId: 't1',
      endpointId: 'e1',
      page: 3,
    });
    expect(auditFiltersOf(params('page=0')).page).toBe(1);
    expect(auditFiltersOf(params('page=x')).page).toBe(1);
  });

  it('writes the hash query back the way it reads it, defaults left out', () => {
    for (const query of ['', 'team_id=t1', 'endpoint_id=e1', 'team_id=t1&endpoint_id=e1&page=2', 'page=4']) {
      expect(auditFiltersQuery(auditFiltersOf(params(query)))).toBe(query);
    }
  });

  it('asks the API for the scope, the page and a page size; no team is the personal account', () => {
    expect(auditApiQuery({ teamId: '', endpointId: '', page: 1 })).toBe('page=1&limit=50');
    expect(auditApiQuery({ teamId: 't 1', endpointId: 'e1', page: 2 })).toBe(
      'team_id=t+1&endpoint_id=e1&page=2&limit=50',
    );
  });

  it('says an action in words, whatever the action', () => {
    expect(actionText('endpoint.updated')).toBe('Endpoint updated');
    expect(actionText('bulk_replay.created')).toBe('Bulk replay created');
    expect(actionText('invitation.accepted')).toBe('Invitation accepted');
  });

  it('names the actor: a user by email, an API key by its id and owner', () => {
    const id = '0f8c2b1e-7a43-4d8e-9c11-5a2b3c4d5e6f';
    expect(actorText({ type: 'user', id, email: 'ada@example.com' })).toBe('ada@example.com');
    expect(actorText({ type: 'api_key', id, email: 'ada@example.com' })).toBe(
      'API key 0f8c2b1e of ada@example.com',
    );
  });

  it('names the target by kind and the start of its id', () => {
    expect(targetText({ type: 'bulk_replay', id: '9a8b7c6d-0000-4000-8000-000000000000' })).toBe(
      'bulk replay 9a8b7c6d',
    );
  });

  it('shows the changes as JSON, nothing when there were none', () => {
    expect(changesText({})).toBeNull();
    expect(changesText({ name: 'Stripe', secret: '[redacted]' })).toBe(
      '{\n  "name": "Stripe",\n  "secret": "[redacted]"\n}',
    );
  });

  it('routes the audit log, teams, a team and the invitation link', () => {
    const audit = parseHash('#/audit-log?team_id=t1');
    expect(audit.name === 'audit-log' && audit.params.get('team_id')).toBe('t1');
    expect(parseHash('#/teams')).toEqual({ name: 'teams' });
    expect(parseHash('#/teams/t%201')).toEqual({ name: 'team', id: 't 1' });
    expect(parseHash('#/invitations/accept?token=abc_-9')).toEqual({ name: 'invitation', token: 'abc_-9' });
    expect(parseHash('#/invitations/accept')).toEqual({ name: 'invitation', token: '' });
    expect(parseHash('#/teams/t1/x')).toEqual({ name: 'not-found' });
  });
});
