import type { StreamState } from '../stream';

const TEXT: Record<StreamState, string> = {
  connecting: 'Connecting…',
  open: 'Live',
  reconnecting: 'Reconnecting…',
  closed: 'Not live',
};

/** Whether the live stream is connected, in words. */
export function LiveIndicator({ state }: { state: StreamState }) {
  return (
    <span class={`live live-${state}`} data-testid="live-status" data-state={state} role="status">
      <span class="live-dot" aria-hidden="true" />
      {TEXT[state]}
    </span>
  );
}
