import { isUtf8 } from 'node:buffer';
import type { DeliveryDto, EventDto } from './dto/event.dto';
import type { DeliveryRow, EventRow } from './events.repository';

/** The exact body: text when it is valid UTF-8 (NUL bytes included), base64 otherwise. */
function presentBody(row: EventRow): Pick<EventDto, 'body' | 'body_encoding'> {
  if (row.body_text !== null) return { body: row.body_text };
  const bytes = row.body_bytes ?? Buffer.alloc(0);
  if (isUtf8(bytes)) return { body: bytes.toString('utf8') };
  return { body: bytes.toString('base64'), body_encoding: 'base64' };
}

export function toEventDto(row: EventRow): EventDto {
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    status: row.status,
    method: row.method,
    headers: row.headers,
    query: row.query,
    ...presentBody(row),
    source_ip: row.source_ip,
    received_at: row.received_at,
    verification: { status: row.verification_status, reason: row.verification_reason },
    duplicate_count: row.duplicate_count,
    ...(row.body_truncated ? { body_truncated: true as const } : {}),
  };
}

export function toDeliveryDto(row: DeliveryRow): DeliveryDto {
  return {
    id: row.id,
    event_id: row.event_id,
    destination: { id: row.destination_id, url: row.destination_url },
    status: row.status,
    attempt_count: row.attempt_count,
    response_code: row.response_code,
    response_body: row.response_body,
    last_attempted_at: row.last_attempted_at,
    created_at: row.created_at,
    attempts: row.attempts,
  };
}
