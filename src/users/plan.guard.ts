import { EntityManager } from '@mikro-orm/postgresql';
import { type CanActivate, type ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import { PLANS, type Plan } from '../common/plans';
import { User } from './user.entity';

export const REQUIRED_PLAN = 'hooktrail:requiredPlan';

/**
 * Lets a request through when the caller's current plan (read from the database, so a plan change
 * applies at once) is at least the plan the route requires; otherwise 403 with `upgrade_required`.
 */
@Injectable()
export class PlanGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly em: EntityManager,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const required = this.reflector.getAllAndOverride<Plan | undefined>(REQUIRED_PLAN, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!required) return true;
    const caller = context.switchToHttp().getRequest<{ user: AuthUser }>().user;
    const user = await this.em.fork().findOne(User, { id: caller.id }, { fields: ['plan'] });
    if (user && PLANS.indexOf(user.plan) >= PLANS.indexOf(required)) return true;
    throw new ForbiddenException({
      statusCode: 403,
      error: 'Forbidden',
      message: `this feature needs the ${required} plan or above; your plan is ${user?.plan ?? 'unknown'}`,
      upgrade_required: true,
    });
  }
}
