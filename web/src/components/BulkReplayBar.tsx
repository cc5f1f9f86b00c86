import { useEffect, useState } from 'preact/hooks';
import { api, endpointPath } from '../api/client';
import { isAbortError } from '../api/errors';
import { plural } from '../format';
import type { BulkReplay } from '../types';
import { Alert } from './Alert';

/** How often a running bulk replay's progress is read. */
const POLL_MS = 1000;

interface Props {
  endpointId: string;
  /** The events list's filters (empty: not set). */
  status: string;
  from: string;
  q: string;
  /** The list's count of matching events: when it changes (a new event), the events are counted again. */
  listed: number | undefined;
  /** Changes when events changed status under the list's status filter: they are counted again. */
  statusMoves: number;
  /**
   * The list filters by signature, which a bulk replay cannot: no replay can be started (a running one is
   * still shown, with its Cancel).
   */
  bySignature: boolean;
}

const count = new Intl.NumberFormat();

function progressLabel(replay: BulkReplay): string {
  const of = `${count.format(replay.done)} of ${plural(replay.total, 'event')}`;
  if (replay.status === 'running') return `Replaying: ${of} sent to the destinations`;
  if (replay.status === 'completed') return `Replayed ${plural(replay.done, 'event')}`;
  return `Cancelled: ${of} had been replayed`;
}

/**
 * "Replay all N matching": replays every event the list's filters match (N is counted by a dry run as the
 * filters or the list's total change, and as events change status under a status filter), then shows the
 * replay's progress with Cancel. A replay still running is picked up again after a reload.
 */
export function BulkReplayBar({ endpointId, status, from, q, listed, statusMoves, bySignature }: Props) {
  const [matching, setMatching] = useState<number | null>(null);
  const [replay, setReplay] = useState<BulkReplay | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [failedPolls, setFailedPolls] = useState(0);
  const path = endpointPath(endpointId, 'bulk-replays');
  const filter = { ...(status ? { status } : {}), ...(from ? { from } : {}), ...(q ? { q } : {}) };
  const filterKey = JSON.stringify(filter);

  // Other filters: nothing is offered until their events are counted. The same filters: the count shown
  // stays until the new one comes (no flicker while events change status).
  useEffect(() => setMatching(null), [path, filterKey, bySignature]);

  useEffect(() => {
    if (bySignature) return;
    const controller = new AbortController();
    setError(null);
    api<{ count: number }>(path, {
      method: 'POST',
      body: { ...filter, dry_run: true },
      signal: controller.signal,
    }).then(
      (answer) => setMatching(answer.count),
      (err) => !isAbortError(err) && setError(err),
    );
    return () => controller.abort();
  }, [path, filterKey, listed, statusMoves, bySignature]);

  useEffect(() => {
    api<{ bulk_replays: BulkReplay[] }>(path).then((answer) => {
      const [newest] = answer.bulk_replays;
      if (newest?.status === 'running') setReplay(newest);
    }, setError);
  }, [path]);

  // A poll that fails is shown and tried again a POLL_MS later: the progress never freezes on one failure.
  useEffect(() => {
    if (replay?.status !== 'running') return;
    const timer = setTimeout(() => {
      api<{ bulk_replay: BulkReplay }>(`${path}/${replay.id}`).then(
        (answer) => {
          setError(null);
          setReplay(answer.bulk_replay);
        },
        (err) => {
          setError(err);
          setFailedPolls((failed) => failed + 1);
        },
      );
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [path, replay, failedPolls]);

  // Never rejects (failures are shown through setError), so the buttons fire and forget it.
  const act = async (request: () => Promise<{ bulk_replay: BulkReplay }>) => {
    setBusy(true);
    setError(null);
    try {
      setReplay((await request()).bulk_replay);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const start = () => act(() => api(path, { method: 'POST', body: filter }));
  const cancel = () => act(() => api(`${path}/${replay!.id}/cancel`, { method: 'POST' }));

  const running = replay?.status === 'running';
  return (
    <div class="bulk-replay" data-testid="bulk-replay">
      {replay && (
        <div class="bulk-progress" data-testid="bulk-replay-progress" data-status={replay.status}>
          <label for="bulk-replay-bar">{progressLabel(replay)}</label>
          <progress
            id="bulk-replay-bar"
            data-testid="bulk-replay-bar"
            value={replay.done}
            max={Math.max(replay.total, 1)}
          />
          {running && (
            <button
              type="button"
              class="btn btn-small btn-danger-outline"
              data-testid="bulk-replay-cancel"
              onClick={() => void cancel()}
              disabled={busy}
            >
              Cancel
            </button>
          )}
        </div>
      )}
      {!running && bySignature && (
        <p class="hint bulk-replay-note" data-testid="bulk-replay-unavailable">
          Bulk replay does not filter by signature: set Signature to Any to replay the matching events.
        </p>
      )}
      {!running && !bySignature && (
        <button
          type="button"
          class="btn"
          data-testid="bulk-replay-start"
          data-count={matching ?? undefined}
          disabled={busy || !matching}
          onClick={() => void start()}
        >
          {matching === null
            ? error
              ? 'Matching events not counted'
              : 'Counting matching events…'
            : matching === 0
              ? 'No events to replay'
              : `Replay all ${count.format(matching)} matching`}
        </button>
      )}
      <Alert error={error} />
    </div>
  );
}
