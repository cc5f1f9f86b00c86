import pc from 'picocolors';
import type { CapturedEvent, DestinationList, EventList } from './api-client';
import { bodyPreview, destinationsView, eventsView, forwardLine, localTime, table } from './human-views';

const plain = pc.createColors(false);

function capturedEvent(overrides: Partial<CapturedEvent> = {}): CapturedEvent {
  return {
    id: '5bfd502d-d138-42e4-ab05-cbb146dd093e',
    endpoint_id: '66fe9c62-607b-4d4b-8335-dbe5436dad48',
    method: 'POST',
    query: '',
    headers: { 'content-type': 'application/json' },
    body: '{"type":"invoice.paid"}',
    received_at: '2026-11-23T10:00:01.000Z',
    source_ip: '203.0.113.7',
    status: 'received',
    duplicate_count: 0,
    verification: { status: 'none', reason: null },
    ...overrides,
  };
}

describe(localTime.name, () => {
  it('prints a local date and time to the second', () => {
    expect(localTime(new Date(2026, 10, 3, 9, 5, 7, 999))).toBe('2026-11-03 09:05:07');
  });
});

describe(table.name, () => {
  it('pads every column but the last to its widest cell', () => {
    expect(
      table(
        ['NAME', 'ID'],
        [
          ['Payments', '1'],
          ['Git', '22'],
        ],
        plain,
      ),
    ).toBe(['NAME      ID', 'Payments  1', 'Git       22'].join('\n'));
  });
});

describe(destinationsView.name, () => {
  type Destination = DestinationList['destinations'][number];
  const destination = (overrides: Partial<Destination>): Destination => ({
    id: 'd_1',
    endpoint_id: '66fe9c62-607b-4d4b-8335-dbe5436dad48',
    url: 'https://api.example.com/hooks',
    secret: null,
    secret_set: false,
    is_active: true,
    rate_limit: null,
    rate_limit_period: 'second',
    max_in_flight: null,
    paused: false,
    paused_reason: null,
    auto_pause_after: null,
    ordering: 'none',
    filter: null,
    created_at: '2026-11-23T10:00:00.000Z',
    backlog: { pending: 0, oldest_pending_at: null },
    ...overrides,
  });

  it('shows a secret given, says one is set when the API hid it for the role, and none when there is none', () => {
    const destinations = [
      destination({ id: 'd_1', secret: 'whsec_abc', secret_set: true }),
      destination({ id: 'd_2', url: 'https://b.example.com/', secret: null, secret_set: true }),
      destination({ id: 'd_3', url: 'https://c.example.com/', is_active: false }),
    ];
    expect(destinationsView({ destinations }, plain).split('\n')).toEqual([
      'URL                            ID   ACTIVE  SECRET',
      'https://api.example.com/hooks  d_1  yes     whsec_abc',
      'https://b.example.com/         d_2  yes     (set, hidden for your role)',
      'https://c.example.com/         d_3  no      none',
    ]);
  });

  it('says when there are none', () => {
    expect(destinationsView({ destinations: [] }, plain)).toBe(
      'No destinations: events are stored but not forwarded.',
    );
  });
});

describe(bodyPreview.name, () => {
  it('puts a text body on one line', () => {
    expect(bodyPreview(capturedEvent({ body: '{\n  "a": 1\n}' }))).toBe('{ "a": 1 }');
  });

  it('cuts a long body to 60 characters', () => {
    const preview = bodyPreview(capturedEvent({ body: 'x'.repeat(100) }));
    expect(preview).toBe(`${'x'.repeat(59)}…`);
  });

  it('describes a body that is not text by its size', () => {
    expect(bodyPreview(capturedEvent({ body: '//4AYmlu', body_encoding: 'base64' }))).toBe(
      '(binary, 6 bytes)',
    );
  });
});

describe(eventsView.name, () => {
  it('lists events in a table with the page under it', () => {
    const list: EventList = {
      events: [capturedEvent()],
      pagination: { page: 1, pages: 3, limit: 1, total: 3 },
    };
    const received = localTime(new Date('2026-11-23T10:00:01.000Z'));
    expect(eventsView(list, plain).split('\n')).toEqual([
      'RECEIVED             ID                                    METHOD  STATUS    BODY',
      `${received}  5bfd502d-d138-42e4-ab05-cbb146dd093e  POST    received  {"type":"invoice.paid"}`,
      'Page 1 of 3 (3 events)',
    ]);
  });

  it('says so when there are none', () => {
    expect(eventsView({ events: [], pagination: { page: 1, pages: 0, limit: 50, total: 0 } }, plain)).toBe(
      'No events.',
    );
  });
});

describe(forwardLine.name, () => {
  const receivedAt = new Date(2026, 10, 23, 10, 0, 1);
  const event = capturedEvent({ received_at: receivedAt.toISOString() });

  it("prints the event's capture time, method, event id, local status and duration", () => {
    expect(forwardLine(event, { status: 204, durationMs: 12 }, plain)).toBe(
      '2026-11-23 10:00:01  POST    5bfd502d-d138-42e4-ab05-cbb146dd093e  → 204  12 ms',
    );
  });

  it('prints the error when the local server did not answer', () => {
    const outcome = { error: 'connect ECONNREFUSED 127.0.0.1:4000', durationMs: 1 };
    expect(forwardLine({ ...event, method: 'DELETE' }, outcome, plain)).toBe(
      '2026-11-23 10:00:01  DELETE  5bfd502d-d138-42e4-ab05-cbb146dd093e  → error: connect ECONNREFUSED 127.0.0.1:4000  1 ms',
    );
  });

  it('colours the status by its class when colours are on', () => {
    const colors = pc.createColors(true);
    expect(forwardLine(event, { status: 500, durationMs: 3 }, colors)).toContain(colors.red('500'));
    expect(forwardLine(event, { status: 200, durationMs: 3 }, colors)).toContain(colors.green('200'));
  });
});
