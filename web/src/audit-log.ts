import { shortId } from './format';
import type { AuditEntry } from './types';

/** Entries per page: the API's default. */
export const AUDIT_PAGE_SIZE = 50;

/**
 * The audit log page's filters, as kept in the hash: a team ('' for one's personal account), an endpoint
 * ('' for all of the scope's) and a page.
 */
export interface AuditFilters {
  teamId: string;
  endpointId: string;
  page: number;
}

export function auditFiltersOf(params: URLSearchParams): AuditFilters {
  const page = Number(params.get('page'));
  return {
    teamId: params.get('team_id') ?? '',
    endpointId: params.get('endpoint_id') ?? '',
    page: Number.isInteger(page) && page > 0 ? page : 1,
  };
}

/** The hash query of the filters (what is unset, and page 1, left out), without the `?`. */
export function auditFiltersQuery(filters: AuditFilters): string {
  const params = new URLSearchParams();
  if (filters.teamId) params.set('team_id', filters.teamId);
  if (filters.endpointId) params.set('endpoint_id', filters.endpointId);
  if (filters.page !== 1) params.set('page', String(filters.page));
  return params.toString();
}

/** The API's query for the filters, without the `?`: no team and no endpoint is one's personal account. */
export function auditApiQuery(filters: AuditFilters): string {
  const params = new URLSearchParams(auditFiltersQuery({ ...filters, page: 1 }));
  params.set('page', String(filters.page));
  params.set('limit', String(AUDIT_PAGE_SIZE));
  return params.toString();
}

/**
 * An action in words: `bulk_replay.created` → “Bulk replay created”. Derived from the name rather than
 * listed, so an action the API adds later still reads well.
 */
export function actionText(action: string): string {
  const words = action.replace(/[._]/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Who did it: a user's email, or the API key (and its owner's email) it was done with. */
export function actorText(actor: AuditEntry['actor']): string {
  return actor.type === 'api_key' ? `API key ${shortId(actor.id)} of ${actor.email}` : actor.email;
}

/** What it was done to: the kind of thing and the start of its id. */
export function targetText(target: AuditEntry['target']): string {
  const kind = target.type.replace(/_/g, ' ');
  return target.id ? `${kind} ${shortId(target.id)}` : kind;
}

/** The request's changes as shown when expanded (the API redacts secrets before storing); null for none. */
export function changesText(changes: AuditEntry['changes']): string | null {
  return Object.keys(changes).length === 0 ? null : JSON.stringify(changes, null, 2);
}
