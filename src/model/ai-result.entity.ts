import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { WebhookEvent } from './event.entity';

/** A cached AI answer per event, operation and parameters: a second call is instant and costs no quota. */
@Entity({ tableName: 'ai_results' })
export class AiResult {
  [OptionalProps]?: 'createdAt';

  @ManyToOne(() => WebhookEvent, { primary: true, deleteRule: 'cascade' })
  event!: WebhookEvent;

  @PrimaryKey({ type: 'text' })
  operation!: string;

  @PrimaryKey({ type: 'text', default: '' })
  parameters!: string;

  @Property({ type: 'text' })
  provider!: string;

  @Property({ type: 'text' })
  result!: string;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
