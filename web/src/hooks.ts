import { useEffect, useRef, useState } from 'preact/hooks';
import { endpointPath, getAccessToken, refreshAccessToken } from './api';
import { openEventStream, type StreamState } from './stream';
import type { EventSummary } from './types';

export type LiveChange = { type: 'event.created' | 'event.updated'; event: EventSummary };

function parseChange(eventType: string, data: string): LiveChange | null {
  if (eventType !== 'event.created' && eventType !== 'event.updated') return null;
  try {
    const event = JSON.parse(data) as unknown;
    if (typeof event === 'object' && event !== null && typeof (event as EventSummary).id === 'string') {
      return { type: eventType, event: event as EventSummary };
    }
  } catch {
    // a malformed message is skipped
  }
  return null;
}

/** Follows the endpoint's live stream while mounted; returns the connection state. */
export function useEventStream(endpointId: string, onChange: (change: LiveChange) => void): StreamState {
  const [state, setState] = useState<StreamState>('connecting');
  const handler = useRef(onChange);
  handler.current = onChange;

  useEffect(() => {
    let active = true;
    const stream = openEventStream({
      url: endpointPath(endpointId, 'events', 'stream'),
      getToken: getAccessToken,
      refreshToken: refreshAccessToken,
      onMessage: (message) => {
        const change = parseChange(message.event, message.data);
        if (change && active) handler.current(change);
      },
      onState: (next) => {
        if (active) setState(next);
      },
    });
    return () => {
      active = false;
      stream.close();
    };
  }, [endpointId]);

  return state;
}

export function useDocumentTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Hooktrail` : 'Hooktrail';
  }, [title]);
}
