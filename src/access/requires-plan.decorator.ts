import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiForbiddenResponse } from '@nestjs/swagger';
import { REQUIRED_PLAN } from './route-authorizer';
import type { Plan } from '../common/plans';

/**
 * Restricts a route (or controller) to accounts on `plan` or above: 403 `upgrade_required` otherwise.
 * Enforced by the access guard (RouteAuthorizer), after the route's @Can.
 */
export const RequiresPlan = (plan: Plan) =>
  applyDecorators(
    SetMetadata(REQUIRED_PLAN, plan),
    ApiForbiddenResponse({
      description: `The account's plan is below ${plan}: the body carries upgrade_required: true`,
    }),
  );
