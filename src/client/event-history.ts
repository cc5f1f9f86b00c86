import type { CapturedEvent, HooktrailApi } from './api-client';

/** The largest page the events list gives. */
const PAGE_SIZE = 100;

type CapturedOrder = Pick<CapturedEvent, 'id' | 'received_at'>;

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Capture order: the API lists newest first by (received_at, id), and both compare as plain strings
 * (ISO 8601 UTC times of one format; lower-case UUIDs), so this is the reverse.
 */
export function oldestFirst(a: CapturedOrder, b: CapturedOrder): number {
  return compare(a.received_at, b.received_at) || compare(a.id, b.id);
}

/**
 * Every event received at or after `from` (ISO 8601), oldest first. Pages are read newest first, so an
 * event captured meanwhile pushes the rest down a page: it makes a repeat, never a gap, and repeats are
 * dropped here.
 */
export async function eventsReceivedSince(
  api: HooktrailApi,
  endpointId: string,
  from: string,
): Promise<CapturedEvent[]> {
  const byId = new Map<string, CapturedEvent>();
  for (let page = 1; ; page++) {
    const { events, pagination } = await api.listEvents(endpointId, { from, limit: PAGE_SIZE, page });
    for (const event of events) byId.set(event.id, event);
    if (page >= pagination.pages) break;
  }
  return [...byId.values()].sort(oldestFirst);
}
