import { describeEvent } from './gemini-ai.provider';

const event = (query: string, headers: Record<string, string> = {}) => ({
  method: 'POST',
  query,
  headers,
  body: Buffer.from('{"type":"ping"}'),
  receivedAt: new Date('2026-12-02T10:00:00.000Z'),
});

describe(describeEvent.name, () => {
  it('masks the values of headers and query parameters named like credentials', () => {
    const prompt = describeEvent(
      event('source=crm&token=tok-value&api_key=key-value&X-Api-Key=other', {
        'x-signature': 'sig-value',
        'content-type': 'application/json',
      }),
    );
    expect(prompt).toContain('Query: source=crm&token=[redacted]&api_key=[redacted]&X-Api-Key=[redacted]');
    expect(prompt).toContain('x-signature: [redacted]');
    expect(prompt).toContain('content-type: application/json');
    expect(prompt).not.toMatch(/tok-value|key-value|other|sig-value/);
  });

  it('shows any other query as captured, and says when there is none', () => {
    expect(describeEvent(event('page=2&sort=desc%20x'))).toContain('Query: page=2&sort=desc%20x');
    expect(describeEvent(event(''))).toContain('Query: (none)');
  });
});
