import { OptionalProps, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Endpoint } from '../endpoints/endpoint.entity';

@Entity({ tableName: 'destinations' })
@Index({ properties: ['endpoint', 'createdAt'] })
export class Destination {
  [OptionalProps]?: 'secret' | 'isActive' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Endpoint, { deleteRule: 'cascade' })
  endpoint!: Endpoint;

  @Property({ type: 'text' })
  url!: string;

  @Property({ type: 'text', nullable: true })
  secret: string | null = null;

  @Property({ type: 'boolean', default: true })
  isActive = true;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
