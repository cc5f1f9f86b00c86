import type { Endpoint, HooktrailApi } from './api-client';
import { CliError, ENDPOINTS_LIST_HINT } from './cli-error';

/** Finds the endpoint a user named on the command line: by id (any case), else by exact name. */
export function resolveEndpoint(endpoints: Endpoint[], reference: string): Endpoint {
  const byId = endpoints.find((endpoint) => endpoint.id.toLowerCase() === reference.toLowerCase());
  if (byId) return byId;
  const named = endpoints.filter((endpoint) => endpoint.name === reference);
  if (named.length === 1) return named[0];
  if (named.length === 0) throw new CliError(`endpoint not found: ${reference} ${ENDPOINTS_LIST_HINT}`);
  throw new CliError(
    `${named.length} endpoints are named "${reference}" (${named.map((endpoint) => endpoint.id).join(', ')}): use an id`,
  );
}

export async function findEndpoint(api: HooktrailApi, reference: string): Promise<Endpoint> {
  const { endpoints } = await api.listEndpoints();
  return resolveEndpoint(endpoints, reference);
}
