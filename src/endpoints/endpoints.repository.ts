import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { User } from '../users/user.entity';
import { Endpoint } from './endpoint.entity';

/** Every query of the endpoint aggregate, each scoped by its owner. */
@Injectable()
export class EndpointsRepository {
  constructor(private readonly em: EntityManager) {}

  /** Newest first. */
  listOwned(userId: string): Promise<Endpoint[]> {
    return this.em.find(Endpoint, { user: userId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  }

  findOwned(userId: string, id: string): Promise<Endpoint | null> {
    return this.em.findOne(Endpoint, { id, user: userId });
  }

  /** The endpoint with its destinations, oldest destination first. */
  findOwnedWithDestinations(userId: string, id: string): Promise<Endpoint | null> {
    return this.em.findOne(
      Endpoint,
      { id, user: userId },
      { populate: ['destinations'], orderBy: { destinations: { createdAt: 'asc', id: 'asc' } } },
    );
  }

  /** Whether the endpoint exists and belongs to the user, without loading it. */
  async isOwned(userId: string, id: string): Promise<boolean> {
    return (await this.em.count(Endpoint, { id, user: userId })) > 0;
  }

  /** A new endpoint, written by the next `save`. */
  build(userId: string, name: string): Endpoint {
    return this.em.create(Endpoint, { user: this.em.getReference(User, userId), name });
  }

  /** Writes the endpoints built and the changes made to loaded ones. */
  async save(): Promise<void> {
    await this.em.flush();
  }

  /** Deletes the endpoint; its destinations, events and deliveries go with it (foreign keys cascade). */
  async deleteOwned(userId: string, id: string): Promise<boolean> {
    return (await this.em.nativeDelete(Endpoint, { id, user: userId })) > 0;
  }
}
