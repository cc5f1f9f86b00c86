/**
 * The subscription plans, cheapest first: a plan includes every feature of the plans before it.
 * Kept in src/common (not the users module) because the request's caller (AuthUser) carries one.
 */
export const PLANS = ['free', 'starter', 'pro', 'team'] as const;
export type Plan = (typeof PLANS)[number];

/** Whether `plan` includes the features of `needed`. */
export function planAtLeast(plan: Plan, needed: Plan): boolean {
  return PLANS.indexOf(plan) >= PLANS.indexOf(needed);
}
