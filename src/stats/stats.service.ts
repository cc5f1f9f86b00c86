import { Injectable } from '@nestjs/common';
import type { EndpointStatsDto, StatsBucketDto } from './dto/endpoint-stats.dto';
import { percentileOf } from './latency-histogram';
import { StatsRepository } from './stats.repository';
import { bucketStarts, type StatsWindow, WINDOW_SHAPES } from './stats-windows';

/** An endpoint's statistics over a window, from the counters kept as events and attempts are written. */
@Injectable()
export class StatsService {
  constructor(private readonly stats: StatsRepository) {}

  async forEndpoint(endpointId: string, window: StatsWindow, now = Date.now()): Promise<EndpointStatsDto> {
    const shape = WINDOW_SHAPES[window];
    const starts = bucketStarts(shape, now);
    const since = new Date(starts[0]);
    const [counts, destinations] = await Promise.all([
      this.stats.eventCounts(endpointId, shape.span, since),
      this.stats.destinationAttempts(endpointId, shape.span, since),
    ]);
    const buckets: StatsBucketDto[] = starts.map((start) => ({
      start: new Date(start).toISOString(),
      received: 0,
      delivered: 0,
      failed: 0,
      dead_letter: 0,
    }));
    for (const row of counts) {
      // A counter row (a minute, an hour, a day) falls in one bucket of the window: the buckets are
      // whole multiples of the rows' span, aligned alike.
      const bucket = buckets[Math.floor((row.bucketStart - starts[0]) / shape.bucketMs)];
      if (!bucket) continue;
      bucket.received += row.received;
      bucket.delivered += row.delivered;
      bucket.failed += row.failed;
      bucket.dead_letter += row.deadLetter;
    }
    return {
      window,
      buckets,
      destinations: destinations.map((destination) => ({
        id: destination.id,
        url: destination.url,
        attempts: destination.attempts,
        success_rate: destination.attempts === 0 ? null : destination.successes / destination.attempts,
        p50_ms: destination.attempts === 0 ? null : percentileOf(destination.latency, 50),
        p95_ms: destination.attempts === 0 ? null : percentileOf(destination.latency, 95),
      })),
    };
  }
}
