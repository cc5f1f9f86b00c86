import { Webhook } from 'standardwebhooks';
import { destinationUrlWithQuery, forwardedHeaders } from './delivery-sender';
import { signPayload } from './signature-signer';

describe('forwarded request', () => {
  it('appends the original query string to the destination URL', () => {
    expect(destinationUrlWithQuery('https://example.com/hook', '')).toBe('https://example.com/hook');
    expect(destinationUrlWithQuery('https://example.com/hook', 'a=1&b=2')).toBe(
      'https://example.com/hook?a=1&b=2',
    );
    expect(destinationUrlWithQuery('https://example.com/hook?x=y', 'a=1')).toBe(
      'https://example.com/hook?x=y&a=1',
    );
  });

  it('drops hop-by-hop headers and any hooktrail-* header a sender tried to set, and keeps the rest', () => {
    const headers = forwardedHeaders({
      host: 'hooktrail.example',
      connection: 'keep-alive',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'content-length': '10',
      te: 'trailers',
      upgrade: 'h2c',
      'proxy-authorization': 'Basic x',
      'hooktrail-signature': 'v1,forged',
      'content-type': 'application/json',
      'stripe-signature': 't=1,v1=abc',
      'webhook-id': 'msg_1',
      'set-cookie': ['a=1', 'b=2'],
    });
    expect(headers).toEqual({
      'content-type': 'application/json',
      'stripe-signature': 't=1,v1=abc',
      'webhook-id': 'msg_1',
      'set-cookie': ['a=1', 'b=2'],
    });
  });
});

describe(signPayload.name, () => {
  it('produces a signature the standardwebhooks library accepts for the raw UTF-8 secret', () => {
    const secret = 'my secret ✓';
    const body = Buffer.from('{"hello":"world"}');
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signPayload(secret, 'delivery-1', timestamp, body);

    const verifier = new Webhook(Buffer.from(secret, 'utf8').toString('base64'));
    expect(() =>
      verifier.verify(body.toString(), {
        'webhook-id': 'delivery-1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      }),
    ).not.toThrow();
    expect(() =>
      verifier.verify('{"hello":"tampered"}', {
        'webhook-id': 'delivery-1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      }),
    ).toThrow();
  });
});
