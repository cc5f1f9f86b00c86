import { EntityManager } from '@mikro-orm/postgresql';
import { type ExecutionContext, ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import { type Plan, planAtLeast } from '../common/plans';
import { UUID } from '../common/pipes/resource-id.pipe';
import { User } from '../model/user.entity';
import type { Grant } from './access.repository';
import { AccessService, NOT_FOUND } from './access.service';
import { ROUTE_ACCESS, type RouteAccess } from './can.decorator';

export const REQUIRED_PLAN = 'hooktrail:requiredPlan';

interface AuthorizedRequest {
  params: Record<string, string>;
  grant?: Grant;
}

/**
 * The second half of the access guard, run once the caller is known: the route's @Can (the grant is
 * left on the request for @CurrentGrant), then its @RequiresPlan, judged by the plan of the account the
 * resource belongs to (a team's endpoints are on the team plan) or else the caller's own, read from the
 * database so that a plan change applies at once.
 */
@Injectable()
export class RouteAuthorizer {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessService,
    private readonly em: EntityManager,
  ) {}

  async authorize(context: ExecutionContext, caller: AuthUser): Promise<void> {
    const targets = [context.getHandler(), context.getClass()];
    const route = this.reflector.getAllAndOverride<RouteAccess | undefined>(ROUTE_ACCESS, targets);
    const request = context.switchToHttp().getRequest<AuthorizedRequest>();
    if (route) {
      const id = request.params[route.param] ?? '';
      if (!UUID.test(id)) throw new NotFoundException(NOT_FOUND[route.kind]);
      request.grant = await this.access.require(caller, route.permission, route.kind, id.toLowerCase());
    }
    const required = this.reflector.getAllAndOverride<Plan | undefined>(REQUIRED_PLAN, targets);
    if (!required) return;
    const plan = request.grant?.plan ?? (await this.planOf(caller.id));
    if (plan && planAtLeast(plan, required)) return;
    throw new ForbiddenException({
      statusCode: 403,
      error: 'Forbidden',
      message: `this feature needs the ${required} plan or above; this account's plan is ${plan ?? 'unknown'}`,
      upgrade_required: true,
    });
  }

  private async planOf(userId: string): Promise<Plan | undefined> {
    return (await this.em.fork().findOne(User, { id: userId }, { fields: ['plan'] }))?.plan;
  }
}
