import { formatRate } from './stats-series';
import type { DestinationStats, Destination, Issue } from './types';

/** grey: paused or inactive; red: an unresolved issue; amber: some recent attempts failed; green: fine. */
export type HealthLevel = 'paused' | 'failing' | 'degraded' | 'healthy';

export interface DestinationHealth {
  level: HealthLevel;
  /** Says why, in words (the dot's title and accessible name). */
  text: string;
}

/**
 * The health dot of a destination, the first rule that holds winning: paused (the reason why), inactive,
 * an open or acknowledged issue of it (the latest one), a success rate below 100 % over the recent window
 * (`recent`: its statistics of the last hour), and otherwise healthy.
 */
export function destinationHealth(
  destination: Pick<Destination, 'id' | 'paused' | 'paused_reason' | 'is_active'>,
  issues: readonly Issue[],
  recent: DestinationStats | undefined,
): DestinationHealth {
  if (destination.paused) {
    return { level: 'paused', text: `Paused: ${destination.paused_reason ?? 'paused by hand'}` };
  }
  if (!destination.is_active) return { level: 'paused', text: 'Inactive: events are not forwarded to it' };
  const issue = issues
    .filter((candidate) => candidate.destination.id === destination.id && candidate.status !== 'resolved')
    .sort((a, b) => b.last_seen_at.localeCompare(a.last_seen_at))[0];
  if (issue) return { level: 'failing', text: `Failing: ${issue.summary}` };
  if (recent && recent.success_rate !== null && recent.success_rate < 1) {
    return {
      level: 'degraded',
      text: `Some attempts failed: ${formatRate(recent.success_rate)} of ${recent.attempts} succeeded in the last hour`,
    };
  }
  if (recent && recent.attempts > 0) {
    return { level: 'healthy', text: `Healthy: all ${recent.attempts} attempts succeeded in the last hour` };
  }
  return { level: 'healthy', text: 'Healthy: no failures' };
}
