import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { retryingDeadlocks } from '../database/deadlocks';
import { Endpoint } from '../model/endpoint.entity';
import { Destination, type FlowControl } from '../model/destination.entity';
import { sqlOf } from '../database/write-transaction';

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

  /**
   * Past deliveries keep their copy of the URL; their destination_id becomes null. A worker recording
   * attempts locks deliveries before their destination; the foreign key's cascade would take the
   * destination first. So its deliveries are locked first, in id order (a deadlock that remains is tried
   * again).
   */
  deleteInEndpoint(endpointId: string, id: string): Promise<boolean> {
    return retryingDeadlocks(() =>
      sqlOf(this.em).transaction(async (trx) => {
        await trx.raw(`select 1 from deliveries where destination_id = ? order by id for update`, [id]);
        const deleted = await trx.raw(`delete from destinations where id = ? and endpoint_id = ?`, [
          id,
          endpointId,
        ]);
        return deleted.rowCount > 0;
      }),
    );
  }
}
