import type { Endpoint, IngestRulesInput } from '../types';
import { api, endpointPath } from './client';

/** Sets the ingest rules given (null removes one); answers the endpoint, its rule secrets masked. */
export async function updateIngestRules(endpointId: string, rules: IngestRulesInput): Promise<Endpoint> {
  const { endpoint } = await api<{ endpoint: Endpoint }>(endpointPath(endpointId), {
    method: 'PATCH',
    body: rules,
  });
  return endpoint;
}
