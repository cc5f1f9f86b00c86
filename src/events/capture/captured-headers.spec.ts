import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { capturedHeaders } from './captured-headers';

/** A request as Node's parser leaves it: `headers` built from `rawHeaders` by Node's own rules. */
function received(rawHeaders: string[]): IncomingMessage {
  const request = new IncomingMessage(new Socket());
  for (let index = 0; index < rawHeaders.length; index += 2)
    request.rawHeaders.push(rawHeaders[index], rawHeaders[index + 1]);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Node's parser calls this internal method
  (request as any)._addHeaderLines(rawHeaders, rawHeaders.length);
  return request;
}

describe(capturedHeaders.name, () => {
  it("is Node's headers when no name came twice", () => {
    const request = received(['Content-Type', 'application/json', 'Set-Cookie', 'a=1', 'X-Id', '7']);
    expect(capturedHeaders(request)).toBe(request.headers);
    expect(capturedHeaders(request)).toEqual({
      'content-type': 'application/json',
      'set-cookie': ['a=1'],
      'x-id': '7',
    });
  });

  it('keeps every value of a repeated name, in order, where Node keeps the first or joins them', () => {
    const request = received([
      'Content-Type',
      'application/json',
      'content-type',
      'text/plain',
      'Authorization',
      'Basic a',
      'AUTHORIZATION',
      'Bearer b',
      'X-Many',
      'one',
      'x-many',
      'two',
      'Host',
      'hooktrail.example',
    ]);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-many']).toBe('one, two');
    expect(capturedHeaders(request)).toEqual({
      'content-type': ['application/json', 'text/plain'],
      authorization: ['Basic a', 'Bearer b'],
      'x-many': ['one', 'two'],
      host: 'hooktrail.example',
    });
  });

  it('takes a header named __proto__ as a header, never as the prototype', () => {
    const headers = capturedHeaders(received(['__proto__', 'x', '__proto__', 'y']));
    expect(Object.getPrototypeOf(headers)).toBeNull();
    expect(headers['__proto__']).toEqual(['x', 'y']);
    expect(JSON.parse(JSON.stringify(headers))).toEqual(JSON.parse('{"__proto__":["x","y"]}'));
  });
});
