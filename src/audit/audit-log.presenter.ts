import type { AuditLogRow } from './audit-log.repository';
import type { AuditEntryDto } from './dto/audit-entry.dto';

/** The API shape of an audit log entry. */
export function toAuditEntryDto(row: AuditLogRow): AuditEntryDto {
  return {
    id: row.id,
    at: row.at,
    actor: { type: row.actor_type, id: row.actor_id, email: row.actor_email },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    ip: row.ip,
    changes: row.changes,
  };
}
