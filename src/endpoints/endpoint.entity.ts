import {
  OptionalProps,
  Collection,
  Entity,
  Index,
  ManyToOne,
  OneToMany,
  PrimaryKey,
  Property,
  Unique,
} from '@mikro-orm/core';
import { randomBytes, randomUUID } from 'node:crypto';
import { Destination } from '../destinations/destination.entity';
import { User } from '../users/user.entity';

/** 24 random bytes (192 bits), base64url: 32 URL-safe characters. */
export function newPublicToken(): string {
  return randomBytes(24).toString('base64url');
}

@Entity({ tableName: 'endpoints' })
@Index({ properties: ['user', 'createdAt'] })
export class Endpoint {
  [OptionalProps]?: 'publicToken' | 'isActive' | 'metadata' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text' })
  @Unique()
  publicToken: string = newPublicToken();

  @Property({ type: 'boolean', default: true })
  isActive = true;

  @Property({ type: 'jsonb', default: '{}' })
  metadata: Record<string, unknown> = {};

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @OneToMany(() => Destination, (destination) => destination.endpoint)
  destinations = new Collection<Destination>(this);
}
