import { createdEventId } from './listen-session';

describe(createdEventId.name, () => {
  it('reads the new event id of an event.created message', () => {
    const data = JSON.stringify({ id: 'e1', endpoint_id: 'p1', status: 'received', method: 'POST' });
    expect(createdEventId({ event: 'event.created', id: '1-0', data })).toBe('e1');
  });

  it('ignores event.updated messages, which report status changes', () => {
    expect(
      createdEventId({ event: 'event.updated', data: '{"id":"e1","status":"delivered"}' }),
    ).toBeUndefined();
  });

  it('ignores a message without a usable id', () => {
    expect(createdEventId({ event: 'event.created', data: 'not json' })).toBeUndefined();
    expect(createdEventId({ event: 'event.created', data: '{"id":7}' })).toBeUndefined();
  });
});
