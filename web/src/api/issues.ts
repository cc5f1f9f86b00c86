import type { Issue, IssueWithDiagnosis } from '../types';
import { api } from './client';

/** The user's issues, the most recently failing first; `query` is the API's (status, endpoint_id). */
export async function listIssues(query: string, signal?: AbortSignal): Promise<Issue[]> {
  const { issues } = await api<{ issues: Issue[] }>(`/api/issues${query ? `?${query}` : ''}`, { signal });
  return issues;
}

/** One issue, with the AI's diagnosis of its latest failure on the Starter plan and above. */
export async function getIssue(id: string, signal?: AbortSignal): Promise<IssueWithDiagnosis> {
  const { issue } = await api<{ issue: IssueWithDiagnosis }>(`/api/issues/${encodeURIComponent(id)}`, {
    signal,
  });
  return issue;
}

export async function setIssueStatus(id: string, status: Issue['status']): Promise<Issue> {
  const { issue } = await api<{ issue: Issue }>(`/api/issues/${encodeURIComponent(id)}`, {
    method: 'PATCH',
    body: { status },
  });
  return issue;
}
