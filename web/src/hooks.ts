import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { endpointPath } from './api/client';
import { isAbortError } from './api/errors';
import { listIssues } from './api/issues';
import { getAccessToken, refreshAccessToken } from './api/session';
import { listTeams } from './api/teams';
import { onIssuesChanged } from './issues';
import { openEventStream, type StreamState } from './stream';
import { effectiveScope, type Scope, useStoredScope } from './team-scope';
import { onTeamsChanged } from './teams';
import type { EventSummary, Team } from './types';

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

export interface BusyAction {
  busy: boolean;
  /** What the last run threw, null while nothing did. */
  error: unknown;
  /** Never rejects (a refusal is kept in `error`), so a button can fire and forget it. */
  run: (action: () => Promise<void>) => Promise<void>;
  clearError: () => void;
}

/** Runs an action of a button: busy while it runs, and the refusal it met kept to show. */
export function useBusyAction(): BusyAction {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  const clearError = useCallback(() => setError(null), []);
  return { busy, error, run, clearError };
}

/** The open issues are counted again this often, and shortly after anything says they changed. */
const ISSUE_COUNT_REFRESH_MS = 30_000;
/** Changes within this are counted once (a flood of failures on a live stream is one reload). */
const ISSUE_COUNT_SETTLE_MS = 500;

/** The number of open issues, kept fresh while mounted; null until first known. */
export function useOpenIssueCount(): number | null {
  const [count, setCount] = useState<number | null>(null);
  useEffect(() => {
    let controller: AbortController | undefined;
    let settle: ReturnType<typeof setTimeout> | undefined;
    const load = () => {
      settle = undefined;
      controller?.abort();
      controller = new AbortController();
      // A failed count (or an aborted one) keeps the last one shown: the next change or tick tries again.
      listIssues('status=open', controller.signal).then(
        (issues) => setCount(issues.length),
        () => undefined,
      );
    };
    const soon = () => {
      settle ??= setTimeout(load, ISSUE_COUNT_SETTLE_MS);
    };
    load();
    const timer = setInterval(load, ISSUE_COUNT_REFRESH_MS);
    const stop = onIssuesChanged(soon);
    return () => {
      clearInterval(timer);
      clearTimeout(settle);
      stop();
      controller?.abort();
    };
  }, []);
  return count;
}

export interface TeamsState {
  /** The caller's teams; null until loaded (or when they could not be). */
  teams: Team[] | null;
  error: unknown;
}

/** The caller's teams, loaded again whenever something says they changed. */
export function useTeams(): TeamsState {
  const [state, setState] = useState<TeamsState>({ teams: null, error: null });
  useEffect(() => {
    let controller = new AbortController();
    const load = () => {
      controller.abort();
      controller = new AbortController();
      listTeams(controller.signal).then(
        (teams) => setState({ teams, error: null }),
        (error) => !isAbortError(error) && setState((current) => ({ ...current, error })),
      );
    };
    load();
    const stop = onTeamsChanged(load);
    return () => {
      stop();
      controller.abort();
    };
  }, []);
  return state;
}

export interface ScopeState extends TeamsState {
  /** The team chosen in the header's switcher, or null for the personal account. */
  scope: Scope;
  /** That team, once the teams are loaded. */
  team: Team | null;
}

/** The header's switcher as a page sees it: the scope chosen, checked against the caller's teams. */
export function useScope(): ScopeState {
  const { teams, error } = useTeams();
  const scope = effectiveScope(useStoredScope(), teams);
  const team = teams?.find((candidate) => candidate.id === scope) ?? null;
  return { teams, error, scope, team };
}
