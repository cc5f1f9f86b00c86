import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { retryingDeadlocks } from '../database/deadlocks';
import { User } from '../model/user.entity';
import { Endpoint } from '../model/endpoint.entity';
import { sqlOf } from '../database/write-transaction';

/**
 * Every query of the endpoint aggregate. Who may reach an endpoint is decided before these run, by the
 * access component (src/access), so they take the endpoint's id alone.
 */
@Injectable()
export class EndpointsRepository {
  constructor(private readonly em: EntityManager) {}

  /** The user's own endpoints (outside teams) and those of the teams given, newest first. */
  listReadable(userId: string, teamIds: string[]): Promise<Endpoint[]> {
    return this.em.find(
      Endpoint,
      { $or: [{ teamId: null, user: userId }, { teamId: { $in: teamIds } }] },
      { orderBy: { createdAt: 'desc', id: 'desc' } },
    );
  }

  find(id: string): Promise<Endpoint | null> {
    return this.em.findOne(Endpoint, { id });
  }

  /** The endpoint with its destinations, oldest destination first. */
  findWithDestinations(id: string): Promise<Endpoint | null> {
    return this.em.findOne(
      Endpoint,
      { id },
      { populate: ['destinations'], orderBy: { destinations: { createdAt: 'asc', id: 'asc' } } },
    );
  }

  /** A new endpoint, written by the next `save`. */
  build(userId: string, name: string, teamId: string | null): Endpoint {
    return this.em.create(Endpoint, { user: this.em.getReference(User, userId), name, teamId });
  }

  /** The user as a reference, to make them an endpoint's owner. */
  userReference(userId: string): User {
    return this.em.getReference(User, userId);
  }

  /** Writes the endpoints built and the changes made to loaded ones. */
  async save(): Promise<void> {
    await this.em.flush();
  }

  /**
   * Deletes the endpoint; its destinations, events and deliveries go with it (foreign keys cascade). A
   * worker recording attempts locks events (in id order), then their deliveries, then destinations; the
   * cascade would take the destinations first. So the events are locked first, in id order, and the two
   * never wait on each other in a circle (a deadlock that remains is tried again).
   */
  delete(id: string): Promise<boolean> {
    return retryingDeadlocks(() =>
      sqlOf(this.em).transaction(async (trx) => {
        await trx.raw(`select 1 from events where endpoint_id = ? order by id for update`, [id]);
        const deleted = await trx.raw(`delete from endpoints where id = ?`, [id]);
        return deleted.rowCount > 0;
      }),
    );
  }
}
