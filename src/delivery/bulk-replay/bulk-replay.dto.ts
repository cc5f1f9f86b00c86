import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, ValidateIf } from 'class-validator';
import { EventFilterFields } from '../../events/dto/list-events.query';
import { BULK_REPLAY_STATUSES, type BulkReplayStatus } from './bulk-replay.repository';

/** The events to replay, with the events list's filters; every field is optional. */
export class CreateBulkReplayDto extends EventFilterFields {
  /** true: only count the matching events (200 `{count}`), replay nothing. */
  @ValidateIf((_dto, value) => value !== undefined)
  @IsBoolean({ message: 'dry_run must be true or false' })
  dry_run?: boolean;
}

export class BulkReplayFilterDto {
  /** @example failed */
  status?: string;
  /** ISO 8601 UTC. */
  from?: string;
  /** ISO 8601 UTC. */
  to?: string;
  q?: string;
}

export class BulkReplayDto {
  id!: string;
  endpoint_id!: string;
  /** running until every matching event was dispatched (completed) or it was cancelled. */
  @ApiProperty({ enum: BULK_REPLAY_STATUSES })
  status!: BulkReplayStatus;
  /** The filter it was made with. */
  filter!: BulkReplayFilterDto;
  /** Events that matched when it was made (received up to then). @example 1200 */
  total!: number;
  /** Events dispatched so far (each to the endpoint's active destinations). @example 500 */
  done!: number;
  /** ISO 8601 UTC. */
  created_at!: string;
  /** ISO 8601 UTC; null while running. */
  finished_at!: string | null;
}

export class BulkReplayResponseDto {
  bulk_replay!: BulkReplayDto;
}

export class BulkReplayListResponseDto {
  /** Newest first (the 100 most recent). */
  bulk_replays!: BulkReplayDto[];
}

export class BulkReplayCountDto {
  /** Events that match the filter now. @example 1200 */
  count!: number;
}
