import type { AuditPage } from '../types';
import { api } from './client';

/**
 * Audit log entries, newest first; `query` is the API's (team_id, endpoint_id, page, limit). Without a
 * team or endpoint: the caller's personal account; a team's needs its admin.
 */
export function listAuditLog(query: string, signal?: AbortSignal): Promise<AuditPage> {
  return api<AuditPage>(`/api/audit-log?${query}`, { signal });
}
