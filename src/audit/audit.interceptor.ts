import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { EntityManager } from '@mikro-orm/postgresql';
import { defer, lastValueFrom, type Observable } from 'rxjs';
import { inWriteTransaction } from '../database/write-transaction';
import { auditedRouteOf } from './audit-actions';
import { auditEntryOf, type AuditedRequest, isDryRun } from './audit-entry';
import { AuditLogService } from './audit-log.service';

/**
 * Whether the route's handler takes a body (`@Body()`): one sent to a route that takes none is neither
 * validated nor read, so it is not what the call changed, and is not recorded.
 */
function takesBody(context: ExecutionContext): boolean {
  const args: object =
    Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), context.getHandler().name) ?? {};
  return Object.keys(args).some((key) => key.startsWith(`${RouteParamtypes.BODY}:`));
}

/**
 * Records every successful write through the API in the audit log (global, APP_INTERCEPTOR), so that no
 * controller has to: the route's entry in AUDITED_ROUTES names the action and target. It runs after the
 * access guard (the caller and their grant are known). The handler runs in one transaction
 * (inWriteTransaction) and its entry is inserted in it once the handler returned: the write and its entry
 * commit together or not at all, before the answer is sent; a refused or failed call leaves neither. A route
 * that sends a message (AuditedRoute.sends) runs outside any transaction, its entry stored after the send.
 * A public route has no caller to record: every audited route needs one (test/audit-log.e2e-spec.ts).
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(
    private readonly auditLog: AuditLogService,
    private readonly em: EntityManager,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<AuditedRequest>();
    const route = auditedRouteOf(request.method, request.routeOptions?.url);
    const { user } = request;
    if (!route || !user || isDryRun(route, request)) return next.handle();
    const handleAndRecord = async () => {
      const response: unknown = await lastValueFrom(next.handle());
      await this.auditLog.record(auditEntryOf(route, request, user, response, takesBody(context)));
      return response;
    };
    return defer(() => (route.sends ? handleAndRecord() : inWriteTransaction(this.em, handleAndRecord)));
  }
}
