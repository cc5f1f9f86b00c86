import { ApiProperty } from '@nestjs/swagger';
import { STATS_WINDOWS, type StatsWindow } from '../stats-windows';

export class StatsBucketDto {
  /** When the bucket begins (ISO 8601 UTC). @example 2026-11-25T10:00:00.000Z */
  start!: string;
  /** Events received in the bucket that no attempt was made for yet. @example 2 */
  received!: number;
  /** Events received in the bucket and delivered since. @example 118 */
  delivered!: number;
  /** Events received in the bucket whose delivery is failing (and retrying). @example 3 */
  failed!: number;
  /** Events received in the bucket whose every delivery gave up. @example 1 */
  dead_letter!: number;
}

export class DestinationStatsDto {
  id!: string;
  /** @example https://api.example.com/webhooks */
  url!: string;
  /** Delivery attempts to it in the window. @example 124 */
  attempts!: number;
  /** The share of those attempts answered with a 2xx, 0 to 1; null without attempts. @example 0.96 */
  @ApiProperty({ type: 'number', nullable: true, minimum: 0, maximum: 1 })
  success_rate!: number | null;
  /** The median attempt duration (ms, within about 9 %); null without attempts. @example 84 */
  @ApiProperty({ type: 'integer', nullable: true })
  p50_ms!: number | null;
  /** The 95th percentile of attempt durations (ms, within about 9 %); null without attempts. @example 310 */
  @ApiProperty({ type: 'integer', nullable: true })
  p95_ms!: number | null;
}

export class EndpointStatsDto {
  @ApiProperty({ enum: STATS_WINDOWS })
  window!: StatsWindow;
  /** Every bucket of the window, oldest first, the last one still filling; zeros where nothing happened. */
  buckets!: StatsBucketDto[];
  /** Every destination of the endpoint, oldest first, with its attempts in the window. */
  destinations!: DestinationStatsDto[];
}
