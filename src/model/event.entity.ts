import { OptionalProps, Entity, Enum, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Endpoint } from './endpoint.entity';

export const EVENT_STATUSES = ['received', 'delivered', 'failed', 'dead_letter'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];
export const VERIFICATION_STATUSES = ['verified', 'failed', 'none'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

/**
 * One captured request. The body's exact bytes are kept in one of two columns: `body_text` when they
 * are valid UTF-8 without NUL (searchable through a trigram index), `body_bytes` otherwise.
 * `searchable` says the trigram index covers the event (SearchIndexer marks it after the capture).
 * Rows are written by the capture path in plain SQL (see CaptureRepository); the entity serves reads.
 */
@Entity({ tableName: 'events' })
export class WebhookEvent {
  [OptionalProps]?:
    | 'status'
    | 'query'
    | 'bodyText'
    | 'bodyBytes'
    | 'sourceIp'
    | 'receivedAt'
    | 'searchable'
    | 'verificationStatus'
    | 'verificationReason'
    | 'duplicateCount';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Endpoint, { deleteRule: 'cascade', index: false })
  endpoint!: Endpoint;

  @Enum({ items: () => EVENT_STATUSES, type: 'text', default: 'received' })
  status: EventStatus = 'received';

  @Property({ type: 'text' })
  method!: string;

  @Property({ type: 'jsonb' })
  headers!: Record<string, string | string[]>;

  @Property({ type: 'text', default: '' })
  query = '';

  @Property({ type: 'text', nullable: true })
  bodyText: string | null = null;

  @Property({ type: 'blob', columnType: 'bytea', nullable: true })
  bodyBytes: Buffer | null = null;

  @Property({ type: 'text', nullable: true })
  sourceIp: string | null = null;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  receivedAt: Date = new Date();

  @Property({ type: 'boolean', default: false })
  searchable = false;

  /** The provider's signature: `verified`, `failed` (see `verificationReason`) or `none` (not checked). */
  @Enum({ items: () => VERIFICATION_STATUSES, type: 'text', default: 'none' })
  verificationStatus: VerificationStatus = 'none';

  @Property({ type: 'text', nullable: true })
  verificationReason: string | null = null;

  /** The dedup key this event claimed (its endpoint's dedup rule), kept for when Redis loses the claims. */
  @Property({ type: 'text', nullable: true })
  dedupKey: string | null = null;

  /** Repeats of this event the endpoint's dedup answered without storing them. */
  @Property({ type: 'integer', default: 0 })
  duplicateCount = 0;
}
