import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, NotFoundException, type OnModuleDestroy } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeyRevocations } from '../api-keys/api-key-revocations';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import { Endpoint } from '../endpoints/endpoint.entity';
import {
  compareStreamIds,
  EventStreamService,
  isStreamId,
  type StreamedChange,
} from './event-stream.service';

export const HEARTBEAT_MS = 15_000;

function format(change: StreamedChange): string {
  return `id: ${change.id}\nevent: ${change.type}\ndata: ${JSON.stringify(change.event)}\n\n`;
}

/** Opens one dashboard's SSE connection: ownership check, missed changes, then live ones. */
@Injectable()
export class EventStreamGateway implements OnModuleDestroy {
  private readonly streams = new Set<ServerResponse>();

  constructor(
    private readonly em: EntityManager,
    private readonly changes: EventStreamService,
    private readonly revocations: ApiKeyRevocations,
  ) {}

  /** Ends every stream before the HTTP server closes (dashboards reconnect, to another process). */
  onModuleDestroy(): void {
    for (const response of this.streams) response.end();
  }

  async connect(
    user: AuthUser,
    endpointId: string,
    lastEventId: string | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ) {
    const owned = await this.em.fork().count(Endpoint, { id: endpointId, user: user.id });
    if (owned === 0) throw new NotFoundException('endpoint not found');

    // Live changes are buffered while the missed ones are read, then sent after them without repeats.
    let lastSent = lastEventId && isStreamId(lastEventId) ? lastEventId : undefined;
    let buffered: StreamedChange[] | undefined = lastSent ? [] : undefined;
    const raw = reply.raw;
    const send = (change: StreamedChange) => {
      if (lastSent && compareStreamIds(change.id, lastSent) <= 0) return;
      lastSent = change.id;
      raw.write(format(change));
    };
    // Listening first: the dashboard, once told it is connected, gets every change made after that.
    const stop = await this.changes.listen(endpointId, (change) =>
      buffered ? buffered.push(change) : send(change),
    );
    if (request.raw.destroyed) return stop();

    reply.hijack();
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    raw.write(': connected\n\n');
    this.streams.add(raw);
    const heartbeat = setInterval(() => raw.write(': heartbeat\n\n'), HEARTBEAT_MS);
    // A stream opened with an API key ends when the key is revoked or expires; its reconnection is refused.
    const unwatch = user.apiKey ? this.revocations.watch(user.apiKey, () => raw.end()) : () => undefined;
    const cleanUp = () => {
      this.streams.delete(raw);
      stop();
      clearInterval(heartbeat);
      unwatch();
    };
    request.raw.once('close', cleanUp);
    raw.once('close', cleanUp);
    if (lastSent && buffered) {
      const missed = await this.changes.since(endpointId, lastSent).catch(() => []);
      missed.forEach(send);
      const live = buffered;
      buffered = undefined;
      live.forEach(send);
    }
  }
}
