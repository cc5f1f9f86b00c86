import { SseParser } from './stream';

/** The dashboard's SSE parser: what a reconnect would resume from (`lastEventId`) after each chunk. */
describe('SSE parser', () => {
  it('takes a message’s id once the message is complete, not while it is cut off', () => {
    const parser = new SseParser('1-0-0');
    expect(parser.feed('id: 2-0-0\nevent: event.created\ndata: {"id":')).toEqual([]);
    expect(parser.lastEventId).toBe('1-0-0');
    expect(parser.feed('"e1"}\n\n')).toEqual([{ event: 'event.created', data: '{"id":"e1"}', id: '2-0-0' }]);
    expect(parser.lastEventId).toBe('2-0-0');
  });

  it('takes the id of a message without data, and dispatches nothing for it', () => {
    const parser = new SseParser();
    expect(parser.feed(': connected\n\nid: 5-0\n\n')).toEqual([]);
    expect(parser.lastEventId).toBe('5-0');
  });
});
