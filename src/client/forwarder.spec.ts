import { bodyBytes, forwardedHeaders } from './forwarder';

describe(forwardedHeaders.name, () => {
  it('keeps the end-to-end headers, lists included', () => {
    const sut = forwardedHeaders({
      'content-type': 'application/json',
      'stripe-signature': 't=1,v1=abc',
      'set-cookie': ['a=1', 'b=2'],
    });
    expect(sut).toEqual({
      'content-type': 'application/json',
      'stripe-signature': 't=1,v1=abc',
      'set-cookie': ['a=1', 'b=2'],
    });
  });

  it('drops hop-by-hop headers and those the local connection sets itself', () => {
    const sut = forwardedHeaders({
      connection: 'keep-alive',
      'keep-alive': 'timeout=5',
      'proxy-authorization': 'Basic eA==',
      'proxy-connection': 'keep-alive',
      te: 'trailers',
      trailer: 'x-checksum',
      'transfer-encoding': 'chunked',
      upgrade: 'h2c',
      host: 'hooktrail.example.com',
      'content-length': '17',
      'x-kept': 'yes',
    });
    expect(sut).toEqual({ 'x-kept': 'yes' });
  });

  it('drops the headers that the Connection header names as hop-by-hop', () => {
    expect(forwardedHeaders({ connection: 'close, X-Hop', 'x-hop': '1', 'x-end': '2' })).toEqual({
      'x-end': '2',
    });
  });

  it('skips values that are not header values', () => {
    expect(forwardedHeaders({ 'x-number': 3, 'x-mixed': ['a', 1], 'x-text': 't' })).toEqual({
      'x-text': 't',
    });
  });
});

describe(bodyBytes.name, () => {
  it('sends a text body as its UTF-8 bytes and a base64 one as the bytes it encodes', () => {
    expect(bodyBytes({ body: 'héllo' })).toEqual(Buffer.from('héllo', 'utf8'));
    expect(bodyBytes({ body: '//4AYmlu', body_encoding: 'base64' })).toEqual(
      Buffer.from([0xff, 0xfe, 0x00, 0x62, 0x69, 0x6e]),
    );
  });
});
