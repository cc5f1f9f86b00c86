/** The queue of bulk replays: one job per running replay, its job id the replay's id. */
export const BULK_REPLAY_QUEUE = 'bulk-replays';

export interface BulkReplayJob {
  bulkReplayId: string;
}

/** A replay's job: one at a time per replay (its id), gone once it ends, so that the sweep can add it again. */
export function bulkReplayJobOptions(bulkReplayId: string) {
  return { jobId: bulkReplayId, removeOnComplete: true, removeOnFail: true };
}
