import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Endpoint } from '../endpoints/endpoint.entity';
import { WebhookEvent } from '../events/event.entity';

/**
 * The outbox of dead-letter emails: written in the transaction that moves an event to `dead_letter`,
 * marked sent once a mail (single or digest) covering it went out.
 */
@Entity({ tableName: 'dead_letter_alerts' })
export class DeadLetterAlert {
  [OptionalProps]?: 'createdAt' | 'sentAt';

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
}
