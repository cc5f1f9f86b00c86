import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Grant } from '../access/access.repository';
import { AccessService } from '../access/access.service';
import { revoked, Revocations } from '../access/revocations';
import type { AuthUser } from '../common/decorators/current-user.decorator';
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

/**
 * Opens one dashboard's SSE connection, once the access guard has found that the caller may read the
 * endpoint: missed changes, then live ones.
 */
@Injectable()
export class EventStreamGateway implements OnModuleDestroy {
  private readonly streams = new Set<ServerResponse>();

  constructor(
    private readonly changes: EventStreamService,
    private readonly revocations: Revocations,
    private readonly access: AccessService,
  ) {}

  /** Ends every stream before the HTTP server closes (dashboards reconnect, to another process). */
  onModuleDestroy(): void {
    for (const response of this.streams) response.end();
  }

  async connect(
    user: AuthUser,
    grant: Grant,
    endpointId: string,
    lastEventId: string | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ) {
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
    // A first connection is told where the stream stands (an id and no data, which dispatches nothing), so
    // that a dashboard that has seen no change yet still resumes from there after a drop.
    const position = lastSent ? undefined : this.changes.position(endpointId);
    if (position !== undefined) raw.write(`id: ${position}\n\n`);
    this.streams.add(raw);
    // The stream ends when the access it was opened with does (the API key revoked or expired, the team left,
    // the endpoint moved); its reconnection is judged again. Announced through Redis, and checked in
    // PostgreSQL at each heartbeat too, should an announcement be lost (a failure to check keeps it open).
    const end = () => raw.end();
    const heartbeat = setInterval(() => {
      raw.write(': heartbeat\n\n');
      this.access.stillHolds(user, 'endpoint.read', 'endpoint', endpointId).then(
        (holds) => holds || end(),
        () => undefined,
      );
    }, HEARTBEAT_MS);
    const unwatch = [
      this.revocations.watch(revoked.endpoint(endpointId), end),
      ...(user.apiKey ? [this.revocations.watchApiKey(user.apiKey, end)] : []),
      ...(grant.teamId ? [this.revocations.watch(revoked.membership(grant.teamId, user.id), end)] : []),
    ];
    const cleanUp = () => {
      this.streams.delete(raw);
      stop();
      clearInterval(heartbeat);
      unwatch.forEach((stopWatching) => stopWatching());
    };
    request.raw.once('close', cleanUp);
    raw.once('close', cleanUp);
    if (lastSent && buffered) {
      // Missed changes that cannot be read (Redis away) end the stream: the dashboard reconnects with the
      // same Last-Event-ID and they are read then, rather than skipped for the live ones after them.
      const missed = await this.changes.since(endpointId, lastSent).catch(() => null);
      if (missed === null) {
        raw.end();
        return;
      }
      missed.forEach(send);
      const live = buffered;
      buffered = undefined;
      live.forEach(send);
    }
  }
}
