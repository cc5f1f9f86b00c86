import type { Endpoint, EndpointSettings } from '../types';
import { api, endpointPath } from './client';

/** The caller's endpoints: personal ones and those of every team, each with the caller's role on it. */
export async function listEndpoints(signal?: AbortSignal): Promise<Endpoint[]> {
  const { endpoints } = await api<{ endpoints: Endpoint[] }>('/api/endpoints', { signal });
  return endpoints;
}

/** Creates an endpoint: the caller's own, or in a team where the caller is a member or above. */
export async function createEndpoint(name: string, teamId: string | null): Promise<Endpoint> {
  const { endpoint } = await api<{ endpoint: Endpoint }>('/api/endpoints', {
    method: 'POST',
    body: teamId ? { name, team_id: teamId } : { name },
  });
  return endpoint;
}

export async function updateEndpoint(endpointId: string, changes: EndpointSettings): Promise<Endpoint> {
  const { endpoint } = await api<{ endpoint: Endpoint }>(endpointPath(endpointId), {
    method: 'PATCH',
    body: changes,
  });
  return endpoint;
}
