import { effectiveScope, inScope } from './team-scope';

/** The header's team switcher: which endpoints the list shows, and falling back when a team is gone. */
describe('team scope', () => {
  it('shows personal endpoints in the personal scope and a team’s in its own', () => {
    expect(inScope({ team_id: null }, null)).toBe(true);
    expect(inScope({ team_id: 't1' }, null)).toBe(false);
    expect(inScope({ team_id: 't1' }, 't1')).toBe(true);
    expect(inScope({ team_id: 't2' }, 't1')).toBe(false);
    expect(inScope({ team_id: null }, 't1')).toBe(false);
  });

  it('keeps the stored team while the teams load, and while the caller is in it', () => {
    expect(effectiveScope('t1', null)).toBe('t1');
    expect(effectiveScope('t1', [{ id: 't1' }, { id: 't2' }])).toBe('t1');
    expect(effectiveScope(null, [{ id: 't1' }])).toBeNull();
  });

  it('falls back to personal once the caller is no longer in the stored team', () => {
    expect(effectiveScope('gone', [{ id: 't1' }])).toBeNull();
    expect(effectiveScope('gone', [])).toBeNull();
  });
});
