import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Grant } from './access.repository';

/** The caller's grant on the route's resource, found by the access guard (routes marked with @Can). */
export const CurrentGrant = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Grant =>
    context.switchToHttp().getRequest<{ grant: Grant }>().grant,
);
