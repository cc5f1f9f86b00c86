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
import { Destination } from './destination.entity';
import type { DedupSettings, InboundAuthSettings, VerificationSettings } from '../ingest/ingest-rules';
import { User } from './user.entity';

/** 24 random bytes (192 bits), base64url: 32 URL-safe characters. */
export function newPublicToken(): string {
  return randomBytes(24).toString('base64url');
}

@Entity({ tableName: 'endpoints' })
@Index({ properties: ['user', 'createdAt'] })
export class Endpoint {
  [OptionalProps]?:
    | 'publicToken'
    | 'isActive'
    | 'metadata'
    | 'createdAt'
    | 'verification'
    | 'verificationSecret'
    | 'inboundAuth'
    | 'inboundAuthSecret'
    | 'dedup'
    | 'rulesVersion'
    | 'teamId'
    | 'retentionDays';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** Its creator; outside a team (`teamId` null), its owner, the only one who may reach it. */
  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  /** The team it belongs to, whose members reach it by their role (src/access); null: its user's own. */
  @Property({ type: 'uuid', nullable: true })
  teamId: string | null = null;

  /** Days its events are kept, when shorter than its plan's (RETENTION_DAYS); null: the plan's. */
  @Property({ type: 'integer', nullable: true })
  retentionDays: number | null = null;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text' })
  @Unique()
  publicToken: string = newPublicToken();

  @Property({ type: 'boolean', default: true })
  isActive = true;

  @Property({ type: 'jsonb', default: '{}' })
  metadata: Record<string, unknown> = {};

  /** How the provider's signature is checked, without its secret; null: not checked. */
  @Property({ type: 'jsonb', nullable: true })
  verification: VerificationSettings | null = null;

  /** The verification secret, sealed (SecretBox). */
  @Property({ type: 'text', nullable: true })
  verificationSecret: string | null = null;

  /** The credential a capture must carry, without its secret part; null: none. */
  @Property({ type: 'jsonb', nullable: true })
  inboundAuth: InboundAuthSettings | null = null;

  /** The inbound password (basic) or header value, sealed (SecretBox). */
  @Property({ type: 'text', nullable: true })
  inboundAuthSecret: string | null = null;

  @Property({ type: 'jsonb', nullable: true })
  dedup: DedupSettings | null = null;

  /** Raised by the database on every change a capture is judged by (see the ingest_rules migration). */
  @Property({ type: 'integer', default: 0 })
  rulesVersion = 0;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @OneToMany(() => Destination, (destination) => destination.endpoint)
  destinations = new Collection<Destination>(this);
}
