import { InjectRepository } from '@mikro-orm/nestjs';
import { EnsureRequestContext, EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { PLANS, type Plan } from '../common/plans';
import { User } from '../model/user.entity';
import { UsersRepository } from '../model/users.repository';

export class UnknownPlanError extends Error {}
export class UnknownUserError extends Error {}

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(User) private readonly users: UsersRepository,
    private readonly em: EntityManager,
  ) {}

  /** Changes a user's plan (there is no billing: operators use `npm run cli -- set-plan`). */
  @EnsureRequestContext()
  async setPlan(email: string, plan: string): Promise<User> {
    if (!PLANS.includes(plan as Plan))
      throw new UnknownPlanError(`unknown plan "${plan}": use one of ${PLANS.join(', ')}`);
    const user = await this.users.findByEmail(email);
    if (!user) throw new UnknownUserError(`no user with email "${email}"`);
    user.plan = plan as Plan;
    await this.em.flush();
    return user;
  }
}
