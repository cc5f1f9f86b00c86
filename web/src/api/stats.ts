import type { EndpointStats, StatsWindow } from '../types';
import { api, endpointPath } from './client';

/** The endpoint's events per bucket and its destinations' attempts over the window. */
export function endpointStats(
  endpointId: string,
  window: StatsWindow,
  signal?: AbortSignal,
): Promise<EndpointStats> {
  return api<EndpointStats>(`${endpointPath(endpointId, 'stats')}?window=${window}`, { signal });
}
