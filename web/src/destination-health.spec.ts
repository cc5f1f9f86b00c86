import { destinationHealth } from './destination-health';
import type { DestinationStats, Issue } from './types';

/** The health dot beside each destination on the endpoint page. */
describe('destination health dot', () => {
  const destination = { id: 'd_1', paused: false, paused_reason: null, is_active: true };
  const issue = (
    status: Issue['status'],
    summary: string,
    last_seen_at: string,
    destinationId = 'd_1',
  ): Issue => ({
    id: `i_${summary}`,
    endpoint_id: 'e_1',
    destination: { id: destinationId, url: 'https://example.com/hook' },
    kind: 'http_5xx',
    summary,
    status,
    failure_count: 3,
    first_seen_at: '2026-11-25T10:00:00.000Z',
    last_seen_at,
    last_event_id: 'ev_1',
    resolved_at: null,
  });
  const recent = (attempts: number, success_rate: number | null): DestinationStats => ({
    id: 'd_1',
    url: 'https://example.com/hook',
    attempts,
    success_rate,
    p50_ms: 80,
    p95_ms: 200,
  });

  it('is grey when paused, saying why, even with failures', () => {
    const auto = {
      ...destination,
      paused: true,
      paused_reason: 'auto-paused after 5 consecutive failed attempts',
    };
    expect(
      destinationHealth(auto, [issue('open', 'HTTP 500', '2026-11-25T10:00:00Z')], recent(5, 0)),
    ).toEqual({
      level: 'paused',
      text: 'Paused: auto-paused after 5 consecutive failed attempts',
    });
    expect(destinationHealth({ ...destination, paused: true }, [], undefined)).toEqual({
      level: 'paused',
      text: 'Paused: paused by hand',
    });
    expect(destinationHealth({ ...destination, is_active: false }, [], undefined).level).toBe('paused');
  });

  it('is red with an unresolved issue of this destination, naming the latest', () => {
    const issues = [
      issue('acknowledged', 'Time-out after 10 s', '2026-11-25T11:00:00.000Z'),
      issue('open', 'HTTP 503 Service Unavailable', '2026-11-25T12:00:00.000Z'),
      issue('open', 'Someone else', '2026-11-25T13:00:00.000Z', 'd_2'),
    ];
    expect(destinationHealth(destination, issues, recent(10, 1))).toEqual({
      level: 'failing',
      text: 'Failing: HTTP 503 Service Unavailable',
    });
    expect(destinationHealth(destination, [issues[0]], undefined).text).toBe('Failing: Time-out after 10 s');
  });

  it('ignores resolved issues and issues of other destinations', () => {
    const issues = [
      issue('resolved', 'HTTP 500', '2026-11-25T11:00:00.000Z'),
      issue('open', 'HTTP 500', '2026-11-25T11:00:00.000Z', 'd_2'),
    ];
    expect(destinationHealth(destination, issues, recent(4, 1)).level).toBe('healthy');
  });

  it('is amber when some attempts of the last hour failed, green when all succeeded or none were made', () => {
    expect(destinationHealth(destination, [], recent(8, 0.75))).toEqual({
      level: 'degraded',
      text: 'Some attempts failed: 75 % of 8 succeeded in the last hour',
    });
    expect(destinationHealth(destination, [], recent(8, 1))).toEqual({
      level: 'healthy',
      text: 'Healthy: all 8 attempts succeeded in the last hour',
    });
    expect(destinationHealth(destination, [], recent(0, null)).level).toBe('healthy');
    expect(destinationHealth(destination, [], undefined).level).toBe('healthy');
  });
});
