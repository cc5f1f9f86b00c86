import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Plan } from '../../users/user.entity';

/** What the JWT guard puts on the request: the caller, read from the verified access token. */
export interface AuthUser {
  id: string;
  email: string;
  plan: Plan;
}

export const CurrentUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuthUser =>
    context.switchToHttp().getRequest<{ user: AuthUser }>().user,
);
