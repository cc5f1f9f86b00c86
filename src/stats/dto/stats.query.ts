import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, ValidateIf } from 'class-validator';
import { DEFAULT_STATS_WINDOW, STATS_WINDOWS, type StatsWindow } from '../stats-windows';

export class StatsQuery {
  /** The period drawn, ending now: 60 one-minute buckets, 24 hours, 28 six-hour buckets or 30 days (UTC). */
  @ApiPropertyOptional({ enum: STATS_WINDOWS, default: DEFAULT_STATS_WINDOW })
  @ValidateIf((_query: unknown, value: unknown) => value !== undefined)
  @IsIn(STATS_WINDOWS, { message: `window must be one of ${STATS_WINDOWS.join(', ')}` })
  window: StatsWindow = DEFAULT_STATS_WINDOW;
}
