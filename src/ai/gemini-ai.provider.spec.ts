import { FakeGemini } from '../../test/support/fake-gemini';
import type { AiProvider } from './ai.types';
import { describeEvent, GeminiAiProvider } from './gemini-ai.provider';

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

describe(GeminiAiProvider.name, () => {
  let gemini: FakeGemini;
  const local = { explain: () => Promise.resolve({ text: 'the local answer', provider: 'local' as const }) };
  const provider = (timeoutMs: number) =>
    new GeminiAiProvider(
      {
        apiKey: 'test-key',
        model: 'gemini-test',
        baseUrl: gemini.url,
        timeoutMs,
        delivery: { timeoutMs: 10_000, retryDelaysMs: [5_000] },
      },
      local as unknown as AiProvider,
    );
  beforeEach(async () => {
    gemini = await FakeGemini.start();
  });
  afterEach(() => gemini.close());

  it('answers with Gemini and leaves no timer of its time-out holding the process', async () => {
    const timeoutMs = 60_000;
    const armed = jest.spyOn(global, 'setTimeout');
    try {
      gemini.answerWith({ text: 'Gemini explains it.' });
      expect(await provider(timeoutMs).explain(event(''))).toEqual({
        text: 'Gemini explains it.',
        provider: 'gemini',
      });
      const holding = armed.mock.calls
        .map(([, delay], index) => ({ delay, timer: armed.mock.results[index].value as NodeJS.Timeout }))
        .filter(({ delay, timer }) => delay === timeoutMs && timer.hasRef());
      expect(holding).toEqual([]);
    } finally {
      armed.mockRestore();
    }
  });

  it('gives up on Gemini at its time-out and answers with the local engine', async () => {
    gemini.answerWith('hang');
    const started = Date.now();
    expect(await provider(300).explain(event(''))).toEqual({ text: 'the local answer', provider: 'local' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(gemini.requests).toHaveLength(1);
  });
});
