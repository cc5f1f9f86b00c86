import type { EventRoute, FilterRule, FilterVerdict } from '../types';
import { api, endpointPath } from './client';

/** An event's routing to the endpoint's destinations, and destination filters tried on it. */

/** Which of the endpoint's destinations would get the event were it captured now, and why not. */
export async function eventRouting(
  endpointId: string,
  eventId: string,
  signal?: AbortSignal,
): Promise<EventRoute[]> {
  const { destinations } = await api<{ destinations: EventRoute[] }>(
    endpointPath(endpointId, 'events', eventId, 'routing'),
    { signal },
  );
  return destinations;
}

/** Tries a destination filter (null: none) on the event; nothing is saved. A bad rule is a 400. */
export function testFilter(
  endpointId: string,
  eventId: string,
  filter: FilterRule | null,
): Promise<FilterVerdict> {
  return api<FilterVerdict>(endpointPath(endpointId, 'events', eventId, 'filter-test'), {
    method: 'POST',
    body: { filter },
  });
}
