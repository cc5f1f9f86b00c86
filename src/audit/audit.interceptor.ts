import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { concatMap, type Observable } from 'rxjs';
import { auditedRouteOf } from './audit-actions';
import { auditEntryOf, type AuditedRequest, isDryRun } from './audit-entry';
import { AuditLogService } from './audit-log.service';

/**
 * Records every successful write through the API in the audit log (global, APP_INTERCEPTOR), so that no
 * controller has to: the route's entry in AUDITED_ROUTES names the action and target. It runs after the
 * access guard (the caller and their grant are known) and only when the handler returned, so a refused or
 * failed call leaves nothing; the entry is stored before the answer is sent.
 * A public route has no caller to record: every audited route needs one (test/audit-log.e2e-spec.ts).
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(private readonly auditLog: AuditLogService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<AuditedRequest>();
    const route = auditedRouteOf(request.method, request.routeOptions?.url);
    const { user } = request;
    if (!route || !user || isDryRun(route, request)) return next.handle();
    return next.handle().pipe(
      concatMap(async (response: unknown) => {
        await this.auditLog.record(auditEntryOf(route, request, user, response));
        return response;
      }),
    );
  }
}
