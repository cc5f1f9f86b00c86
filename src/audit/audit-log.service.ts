import { Injectable, Logger } from '@nestjs/common';
import { AccessService } from '../access/access.service';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import type { NewAuditEntry } from './audit-entry';
import { type AuditLogFilter, AuditLogRepository } from './audit-log.repository';
import { toAuditEntryDto } from './audit-log.presenter';
import type { AuditLogResponseDto } from './dto/audit-entry.dto';
import type { ListAuditLogQuery } from './dto/list-audit-log.query';

/** The audit log: written once per write through the API, read by those who may read it. */
@Injectable()
export class AuditLogService {
  private readonly logger = new Logger(AuditLogService.name);

  constructor(
    private readonly auditLog: AuditLogRepository,
    private readonly access: AccessService,
  ) {}

  /**
   * Writes the entry, in the transaction of the write it records (AuditInterceptor). A failure is logged
   * and thrown: the write is rolled back with it, and the call answers an error.
   */
  async record(entry: NewAuditEntry): Promise<void> {
    try {
      await this.auditLog.insert(entry);
    } catch (error) {
      this.logger.error(
        { err: error, action: entry.action, targetId: entry.targetId, actorId: entry.actorId },
        'the audit log entry of a write could not be stored: the write is rolled back',
      );
      throw error;
    }
  }

  /** Newest first; `pages` is ceil(total / limit), 0 when nothing matches; a page past the end is empty. */
  async list(caller: AuthUser, query: ListAuditLogQuery): Promise<AuditLogResponseDto> {
    const filter = await this.readableFilter(caller, query);
    const { rows, total } = await this.auditLog.listPage(filter, query.page, query.limit);
    return {
      entries: rows.map(toAuditEntryDto),
      pagination: { page: query.page, limit: query.limit, total, pages: Math.ceil(total / query.limit) },
    };
  }

  /**
   * Whose entries the caller asked for, once they may read them (`audit.read`: a team's admins and owners,
   * an endpoint's owner or its team's admins): a team's, an endpoint's, both at once, or, with neither,
   * their own account's. 404 for a team or endpoint they cannot see, 403 for a role below admin.
   */
  private async readableFilter(caller: AuthUser, query: ListAuditLogQuery): Promise<AuditLogFilter> {
    const teamId = query.team_id?.toLowerCase();
    const endpointId = query.endpoint_id?.toLowerCase();
    if (teamId === undefined && endpointId === undefined) return { accountUserId: caller.id };
    if (teamId !== undefined) await this.access.require(caller, 'audit.read', 'team', teamId);
    if (endpointId === undefined) return { teamId };
    const home = (await this.access.require(caller, 'audit.read', 'endpoint', endpointId)).teamId;
    if (teamId !== undefined) return { teamId, endpointId };
    // An endpoint's log is its current home's: its entries from an earlier one (a team it has left, or its
    // owner's account) stay in that one's log, for whoever may read it.
    return home === null ? { accountUserId: caller.id, endpointId } : { teamId: home, endpointId };
  }
}
