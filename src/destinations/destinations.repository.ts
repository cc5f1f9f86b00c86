import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { Endpoint } from '../endpoints/endpoint.entity';
import { Destination, type FlowControl } from './destination.entity';

/** Every query of destinations, each scoped by the parent endpoint (whose owner the service has checked). */
@Injectable()
export class DestinationsRepository {
  constructor(private readonly em: EntityManager) {}

  /** Oldest first: the order they were added. */
  listForEndpoint(endpointId: string): Promise<Destination[]> {
    return this.em.find(Destination, { endpoint: endpointId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  }

  findInEndpoint(endpointId: string, id: string): Promise<Destination | null> {
    return this.em.findOne(Destination, { id, endpoint: endpointId });
  }

  async create(
    endpointId: string,
    fields: Pick<Destination, 'url' | 'sealedSecret' | 'filter' | 'autoPauseAfter'> & Partial<FlowControl>,
  ): Promise<Destination> {
    const destination = this.em.create(Destination, {
      endpoint: this.em.getReference(Endpoint, endpointId),
      ...fields,
    });
    await this.em.flush();
    return destination;
  }

  async save(): Promise<void> {
    await this.em.flush();
  }

  /** Past deliveries keep their copy of the URL; their destination_id becomes null. */
  async deleteInEndpoint(endpointId: string, id: string): Promise<boolean> {
    return (await this.em.nativeDelete(Destination, { id, endpoint: endpointId })) > 0;
  }
}
