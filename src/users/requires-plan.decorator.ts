import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiForbiddenResponse } from '@nestjs/swagger';
import type { Plan } from '../common/plans';
import { PlanGuard, REQUIRED_PLAN } from './plan.guard';

/** Restricts a route (or controller) to callers on `plan` or above: 403 `upgrade_required` otherwise. */
export const RequiresPlan = (plan: Plan) =>
  applyDecorators(
    SetMetadata(REQUIRED_PLAN, plan),
    UseGuards(PlanGuard),
    ApiForbiddenResponse({
      description: `The caller's plan is below ${plan}: the body carries upgrade_required: true`,
    }),
  );
