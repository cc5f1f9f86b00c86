import type { Colors } from 'picocolors/types';
import type {
  CapturedEvent,
  CreatedEndpoint,
  DestinationList,
  Endpoint,
  EndpointList,
  EventList,
  EventWithDeliveries,
  ReplayResult,
} from './api-client';
import { bodyBytes, type ForwardOutcome } from './forwarder';

const BODY_PREVIEW_CHARS = 60;

/** A local date and time, `2026-11-23 10:00:01`: the clock of the person reading it. */
export function localTime(date: Date): string {
  const two = (value: number) => String(value).padStart(2, '0');
  return (
    `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ` +
    `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`
  );
}

/** Columns padded to their widest cell (the last one not padded), the header dimmed. */
export function table(header: string[], rows: string[][], colors: Colors): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column].length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column])))
      .join('  ');
  return [colors.dim(line(header)), ...rows.map(line)].join('\n');
}

export function endpointsView({ endpoints }: EndpointList, colors: Colors): string {
  if (endpoints.length === 0) return 'No endpoints yet: create one with hooktrail endpoints create <name>';
  return table(
    ['NAME', 'ID', 'ACTIVE', 'CAPTURE URL'],
    endpoints.map((endpoint) => [
      endpoint.name,
      endpoint.id,
      endpoint.is_active ? 'yes' : 'no',
      endpoint.capture_url,
    ]),
    colors,
  );
}

export function createdEndpointView({ endpoint }: CreatedEndpoint, colors: Colors): string {
  return [
    `${colors.green('Created')} endpoint ${colors.bold(endpoint.name)} (${endpoint.id})`,
    `Capture URL: ${endpoint.capture_url}`,
  ].join('\n');
}

/**
 * A destination's signing secret as the API answered it: the secret itself to those who may change the
 * destination, else only whether one is set (a viewer of its team, a read-only API key).
 */
export function secretText({ secret, secret_set }: { secret: string | null; secret_set: boolean }): string {
  if (secret !== null) return secret;
  return secret_set ? '(set, hidden for your role)' : 'none';
}

export function destinationsView({ destinations }: DestinationList, colors: Colors): string {
  if (destinations.length === 0) return 'No destinations: events are stored but not forwarded.';
  return table(
    ['URL', 'ID', 'ACTIVE', 'SECRET'],
    destinations.map((destination) => [
      destination.url,
      destination.id,
      destination.is_active ? 'yes' : 'no',
      secretText(destination),
    ]),
    colors,
  );
}

/** A body on one line, cut to fit a table; a body that is not text by its size. */
export function bodyPreview(event: Pick<CapturedEvent, 'body' | 'body_encoding'>): string {
  if (event.body_encoding === 'base64') return `(binary, ${bodyBytes(event).length} bytes)`;
  const flat = event.body.replace(/\s+/g, ' ').trim();
  return flat.length > BODY_PREVIEW_CHARS ? `${flat.slice(0, BODY_PREVIEW_CHARS - 1)}…` : flat;
}

function statusColor(status: string, colors: Colors): (text: string) => string {
  if (status === 'delivered') return colors.green;
  if (status === 'failed') return colors.yellow;
  if (status === 'dead_letter') return colors.red;
  return (text) => text;
}

export function eventsView({ events, pagination }: EventList, colors: Colors): string {
  if (events.length === 0) return 'No events.';
  const rows = events.map((event) => [
    localTime(new Date(event.received_at)),
    event.id,
    event.method,
    event.status,
    bodyPreview(event),
  ]);
  const page = `Page ${pagination.page} of ${pagination.pages} (${pagination.total} ${pagination.total === 1 ? 'event' : 'events'})`;
  return `${table(['RECEIVED', 'ID', 'METHOD', 'STATUS', 'BODY'], rows, colors)}\n${colors.dim(page)}`;
}

export function eventView({ event }: EventWithDeliveries, colors: Colors): string {
  const label = (text: string) => colors.dim(text.padEnd(13));
  const headers = Object.entries(event.headers).map(([name, value]) => `  ${name}: ${String(value)}`);
  const deliveries = event.deliveries.map(
    (delivery) =>
      `  ${statusColor(delivery.status, colors)(delivery.status)}  ${delivery.destination.url}  ` +
      `${delivery.attempt_count} attempt${delivery.attempt_count === 1 ? '' : 's'}`,
  );
  const binary = event.body_encoding === 'base64';
  return [
    `${label('Event')}${event.id}`,
    `${label('Received')}${localTime(new Date(event.received_at))}`,
    `${label('Request')}${event.method}${event.query ? ` ?${event.query}` : ''}`,
    `${label('Status')}${statusColor(event.status, colors)(event.status)}`,
    `${label('Verification')}${event.verification.status}`,
    colors.dim('Headers'),
    ...headers,
    ...(deliveries.length > 0 ? [colors.dim('Deliveries'), ...deliveries] : []),
    colors.dim(binary ? `Body (${bodyBytes(event).length} bytes, not UTF-8: base64)` : 'Body'),
    event.body,
  ].join('\n');
}

export function replayView(
  endpoint: Endpoint,
  eventId: string,
  result: ReplayResult,
  colors: Colors,
): string {
  return `${colors.green('Replayed')} ${eventId} to the active destinations of ${endpoint.name} (dispatch ${result.jobId})`;
}

/**
 * One line per forwarded event, as `stripe listen` prints them. The time is the event's capture time, not
 * the forwarding's: a `--since` replay forwards a backlog within a second, and each line shows when its
 * event came.
 */
export function forwardLine(
  event: Pick<CapturedEvent, 'id' | 'method' | 'received_at'>,
  outcome: ForwardOutcome,
  colors: Colors,
): string {
  const result =
    outcome.status === undefined
      ? colors.red(`error: ${outcome.error}`)
      : (outcome.status < 300 ? colors.green : outcome.status < 500 ? colors.yellow : colors.red)(
          String(outcome.status),
        );
  return `${localTime(new Date(event.received_at))}  ${event.method.padEnd(6)}  ${event.id}  → ${result}  ${outcome.durationMs} ms`;
}
