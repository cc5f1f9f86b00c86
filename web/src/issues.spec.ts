import { issueFiltersOf, issueFiltersQuery, issuesApiQuery, offersDiagnosis } from './issues';
import { parseHash } from './router';

/** The issues page's filters: read from the hash, written back to it, and sent to the API. */
describe('issues page filters', () => {
  const params = (query: string) => new URLSearchParams(query);

  it('shows open issues by default, any status with `all`', () => {
    expect(issueFiltersOf(params(''))).toEqual({ status: 'open', endpointId: '' });
    expect(issueFiltersOf(params('status=all'))).toEqual({ status: '', endpointId: '' });
    expect(issueFiltersOf(params('status=bogus'))).toEqual({ status: '', endpointId: '' });
    expect(issueFiltersOf(params('status=resolved&endpoint_id=ep_1'))).toEqual({
      status: 'resolved',
      endpointId: 'ep_1',
    });
  });

  it('writes the hash query back the way it reads it, the default left out', () => {
    for (const query of [
      '',
      'status=all',
      'status=acknowledged',
      'endpoint_id=ep_1',
      'status=all&endpoint_id=ep_1',
    ]) {
      expect(issueFiltersQuery(issueFiltersOf(params(query)))).toBe(query);
    }
  });

  it('asks the API for the status and endpoint chosen, nothing for "any"', () => {
    expect(issuesApiQuery({ status: 'open', endpointId: '' })).toBe('status=open');
    expect(issuesApiQuery({ status: '', endpointId: '' })).toBe('');
    expect(issuesApiQuery({ status: 'resolved', endpointId: 'ep 1' })).toBe(
      'status=resolved&endpoint_id=ep+1',
    );
  });

  it('routes #/issues with its filters and #/notifications', () => {
    const route = parseHash('#/issues?status=resolved');
    expect(route.name).toBe('issues');
    expect(route.name === 'issues' && route.params.get('status')).toBe('resolved');
    expect(parseHash('#/notifications')).toEqual({ name: 'notifications' });
    expect(parseHash('#/notifications/x')).toEqual({ name: 'not-found' });
  });
});

/** Whether an issue offers its AI diagnosis: the plan of its endpoint, as the API judges it. */
describe(offersDiagnosis.name, () => {
  it("offers it on a team's endpoint whatever the caller's plan, and on a personal one from Starter up", () => {
    expect(offersDiagnosis('free', { team_id: 'team-1' })).toBe(true);
    expect(offersDiagnosis('free', { team_id: null })).toBe(false);
    expect(offersDiagnosis('starter', { team_id: null })).toBe(true);
    expect(offersDiagnosis('free', undefined)).toBe(false);
    expect(offersDiagnosis('pro', undefined)).toBe(true);
  });
});
