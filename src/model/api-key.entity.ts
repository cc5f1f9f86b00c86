import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { User } from './user.entity';

export const API_KEY_SCOPES = ['read', 'write'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** A long-lived credential for scripts, CI and the CLI: kept only as the SHA-256 hash of the key. */
@Entity({ tableName: 'api_keys' })
export class ApiKey {
  [OptionalProps]?: 'createdAt' | 'lastUsedAt' | 'expiresAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  @Index()
  user!: User;

  @Property({ type: 'text' })
  name!: string;

  @Enum({ items: () => API_KEY_SCOPES, type: 'text' })
  scope!: ApiKeyScope;

  /** The key's first characters, shown in lists so that a key can be recognised. */
  @Property({ type: 'text' })
  prefix!: string;

  @Property({ type: 'text' })
  @Unique()
  keyHash!: string;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  expiresAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null = null;
}
