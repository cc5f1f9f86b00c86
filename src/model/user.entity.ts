import { OptionalProps, Entity, Enum, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { PLANS, type Plan } from '../common/plans';
import { UsersRepository } from './users.repository';

@Entity({ tableName: 'users', repository: () => UsersRepository })
export class User {
  [OptionalProps]?: 'plan' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** Stored trimmed and lower-cased, so the unique index compares case-insensitively. */
  @Property({ type: 'text' })
  @Unique()
  email!: string;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text', hidden: true, lazy: true })
  passwordHash!: string;

  @Enum({ items: () => PLANS, type: 'text', default: 'free' })
  plan: Plan = 'free';

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
