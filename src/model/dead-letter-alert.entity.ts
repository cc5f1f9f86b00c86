import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Endpoint } from './endpoint.entity';
import { WebhookEvent } from './event.entity';

/**
 * The outbox of dead-letter emails: written in the transaction that moves an event to `dead_letter`,
 * claimed for a mail (single or digest), marked sent once that mail went out.
 */
@Entity({ tableName: 'dead_letter_alerts' })
export class DeadLetterAlert {
  [OptionalProps]?: 'createdAt' | 'sentAt' | 'mailId' | 'claimedUntil';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Endpoint, { deleteRule: 'cascade', index: false })
  endpoint!: Endpoint;

  @ManyToOne(() => WebhookEvent, { deleteRule: 'cascade', index: false })
  event!: WebhookEvent;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  sentAt: Date | null = null;

  /** The mail that covers the alert, set when it is claimed: its Message-ID, kept if its worker dies. */
  @Property({ type: 'uuid', nullable: true })
  mailId: string | null = null;

  /** Until then the worker that claimed it is sending its mail; after, another worker sends it again. */
  @Property({ type: 'timestamptz', nullable: true })
  claimedUntil: Date | null = null;
}
