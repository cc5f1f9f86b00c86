import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AccessModule } from '../access/access.module';
import { AuditLogController } from './audit-log.controller';
import { AuditLogRepository } from './audit-log.repository';
import { AuditLogService } from './audit-log.service';
import { AuditInterceptor } from './audit.interceptor';

/**
 * The audit log (README, "Audit log"): its global interceptor records every write through the API
 * (src/audit/audit-actions.ts says what each is called), and GET /api/audit-log reads it.
 */
@Module({
  imports: [AccessModule],
  controllers: [AuditLogController],
  providers: [AuditLogRepository, AuditLogService, { provide: APP_INTERCEPTOR, useClass: AuditInterceptor }],
})
export class AuditModule {}
