const TEAMS_CHANGED = 'hooktrail:teams-changed';

/**
 * The caller's teams changed (one was created, renamed, deleted or left, an invitation was accepted):
 * whoever shows them (the header's switcher, the endpoints list's team names) loads them again.
 */
export function announceTeamsChanged(): void {
  window.dispatchEvent(new Event(TEAMS_CHANGED));
}

export function onTeamsChanged(listener: () => void): () => void {
  window.addEventListener(TEAMS_CHANGED, listener);
  return () => window.removeEventListener(TEAMS_CHANGED, listener);
}
