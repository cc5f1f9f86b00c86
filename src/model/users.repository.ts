import { EntityRepository } from '@mikro-orm/postgresql';
import type { User } from './user.entity';

export class UsersRepository extends EntityRepository<User> {
  findByEmail(email: string): Promise<User | null> {
    return this.findOne({ email: normalizeEmail(email) });
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
