import * as ts from 'typescript';
import {
  formPost,
  genericJson,
  githubPush,
  shopifyOrder,
  stripeInvoicePaid,
} from '../../../test/fixtures/webhook-samples';
import { HANDLER_FRAMEWORKS, type AiDelivery, type HandlerLanguage } from '../ai.types';
import { LocalAiEngine } from './local-ai.engine';

/** Type-checks `code` (strict) in memory and returns the error messages. */
function typeErrors(code: string): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version) =>
    name === 'check.ts' ? ts.createSourceFile(name, code, version) : readFile(name, version);
  const program = ts.createProgram(['check.ts'], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

function attempt(responseCode: number | null, error: string | null = null, durationMs = 120) {
  return { at: '2026-11-23T10:00:00.000Z', response_code: responseCode, duration_ms: durationMs, error };
}

function failed(
  code: number | null,
  error: string | null = null,
  responseBody: string | null = null,
  durationMs?: number,
): AiDelivery {
  return {
    destinationUrl: 'https://api.example.com/hooks',
    status: 'failed',
    responseBody,
    attempts: [attempt(code, error, durationMs)],
  };
}

describe(LocalAiEngine.name, () => {
  const sut = new LocalAiEngine({ timeoutMs: 10_000, retryDelaysMs: [5000, 25000, 120000, 600000] });

  describe('explain', () => {
    it.each([
      ['Stripe', stripeInvoicePaid, ['Stripe', 'invoice.paid', 'in_1Qxyz', '$20.00', 'cus_123']],
      ['GitHub', githubPush, ['GitHub', 'push', 'octocat', '2 commits', 'octo/hello-world']],
      ['Shopify', shopifyOrder, ['Shopify', 'orders/create', '#1001', '199.00']],
      ['a form post', formPost, ['form post', 'name, tag, message']],
      ['a generic JSON sender', genericJson, ['generic JSON', 'contact.updated', 'c_42']],
    ])('names %s, what happened and the key ids in 2 to 3 sentences', async (_name, event, expected) => {
      const { text, provider } = await sut.explain(event);
      expect(provider).toBe('local');
      for (const part of expected) expect(text).toContain(part);
      const sentences = text.split(/(?<=\.)\s+(?=[A-Z])/);
      expect(sentences.length).toBeGreaterThanOrEqual(2);
      expect(sentences.length).toBeLessThanOrEqual(3);
    });
  });

  describe('explain, when the sender says little', () => {
    it.each([
      ['a GET without a body', { ...genericJson, method: 'GET', body: Buffer.alloc(0) }, 'It has no body'],
      [
        'a Stripe event without ids',
        { ...stripeInvoicePaid, body: Buffer.from('{"type":"invoice.paid"}') },
        'Its body is 23 bytes',
      ],
    ])('still answers in 2 sentences: %s', async (_name, event, second) => {
      const { text } = await sut.explain(event);
      const sentences = text.split(/(?<=\.)\s+(?=[A-Z])/);
      expect(sentences).toHaveLength(2);
      expect(sentences[1]).toContain(second);
    });
  });

  describe('schema', () => {
    it('infers nested interfaces, optional fields from differing array elements and null unions, and the sample type-checks', async () => {
      const { text } = await sut.schema(stripeInvoicePaid);
      expect(text).not.toContain('```');
      expect(text).toContain('export interface StripeInvoicePaidEvent');
      expect(text).toMatch(/proration\?:\s+boolean/);
      expect(text).toMatch(/description:\s+null \| string|description:\s+string \| null/);
      expect(text).not.toMatch(/interface Object\b/);
      const check = `${text}\nconst sample: StripeInvoicePaidEvent = ${stripeInvoicePaid.body.toString()};\nexport { sample };\n`;
      expect(typeErrors(check)).toEqual([]);
    });

    it('rejects a payload that does not match (the check can fail)', async () => {
      const { text } = await sut.schema(stripeInvoicePaid);
      expect(
        typeErrors(`${text}\nconst sample: StripeInvoicePaidEvent = { id: 1 };\nexport { sample };\n`),
      ).not.toEqual([]);
    });

    it('keeps payload keys named like globals (Date?, "Event Type") and renames only the interfaces that would shadow one', async () => {
      const body = {
        items: [{ Date: '2026-11-23' }, {}],
        'Event Type': 'contact.updated',
        event: { id: 'c_42' },
      };
      const { text } = await sut.schema({ ...genericJson, body: Buffer.from(JSON.stringify(body)) });
      expect(text).toMatch(/Date\?:\s+string/);
      expect(text).toContain('"Event Type":');
      expect(text).not.toMatch(/interface Event\b/);
      const check = `${text}\nconst sample: WebhookPayload = ${JSON.stringify(body)};\nexport { sample };\n`;
      expect(typeErrors(check)).toEqual([]);
    });

    it('types a long array from its first 1,000 elements', async () => {
      const items = Array.from({ length: 1500 }, (_, index) =>
        index < 1000 ? { id: `it_${index}` } : { id: `it_${index}`, late: true },
      );
      const body = Buffer.from(JSON.stringify({ items }));
      const { text } = await sut.schema({ ...genericJson, body });
      expect(text).toMatch(/id:\s+string;/);
      expect(text).not.toContain('late');
    });

    it('types JSON nested too deep to walk as unknown, and still writes a handler, instead of failing', async () => {
      const deep = { ...genericJson, body: Buffer.from(`${'['.repeat(20_000)}${']'.repeat(20_000)}`) };
      const { text } = await sut.schema(deep);
      expect(text).toContain('export type WebhookPayload = unknown;');
      const handler = await sut.handler(deep, { language: 'typescript', framework: 'express' });
      expect(handler.text).toContain('export type WebhookPayload = unknown;');
    });

    /** The schema of `body` sent as genericJson, checked against `sample` (the body itself unless given). */
    async function typedBody(body: unknown, sample = body): Promise<string> {
      const { text } = await sut.schema({ ...genericJson, body: Buffer.from(JSON.stringify(body)) });
      const check = `${text}\nconst sample: WebhookPayload = ${JSON.stringify(sample)};\nexport { sample };\n`;
      expect(typeErrors(check)).toEqual([]);
      return text;
    }

    it('types an object keyed by ids as a map, even one of 150,000 keys', async () => {
      const entries = Array.from({ length: 150_000 }, (_, n) => [
        `usr_${n.toString(36)}`,
        { name: `n${n}`, age: n },
      ]);
      const text = await typedBody(
        { export: 'users', users: Object.fromEntries(entries) },
        { export: 'users', users: Object.fromEntries(entries.slice(-3)) },
      );
      expect(text).toMatch(/users:\s+\{ \[key: string\]: User \};/);
      expect(text).toMatch(/interface User \{\s+name:\s+string;\s+age:\s+number;\s+\}/);
      expect(text).not.toContain('usr_');
    });

    it('types the values of an object of thousands of keys from its first 1,000, whatever their kinds', async () => {
      const data = Object.fromEntries(
        Array.from({ length: 1500 }, (_, n) => [`k${n}`, n < 1000 ? (n % 2 === 0 ? n : { id: n }) : 'late']),
      );
      const { text } = await sut.schema({ ...genericJson, body: Buffer.from(JSON.stringify({ data })) });
      expect(text).toMatch(/data:\s+\{ \[key: string\]: (\w+ \| number|number \| \w+) \};/);
      expect(text).not.toContain('string };');
    });

    it('keeps a record of few fields an interface', async () => {
      const text = await typedBody({ user: { first: 'Ada', last: 'Lovelace', email: 'ada@example.com' } });
      expect(text).toMatch(/interface User \{\s+first:\s+string;\s+last:\s+string;\s+email:\s+string;\s+\}/);
    });

    it.each([
      [
        'an array of records',
        [
          { email: 'a@example.com', event: 'delivered' },
          { email: 'b@example.com', event: 'open' },
        ],
        /^export type WebhookPayload = WebhookPayloadItem\[\];$/m,
      ],
      ['an array of numbers', [1, 2, 3], /^export type WebhookPayload = number\[\];$/m],
      [
        'an array of records and numbers',
        [{ id: 1 }, 2],
        /^export type WebhookPayload = Array<\w+ \| number>;$/m,
      ],
      ['a string', 'ping', /^export type WebhookPayload = string;$/m],
      [
        'a map keyed by digits',
        { '1': { id: 1 }, '2': { id: 2 } },
        /^export type WebhookPayload = \{ \[key: string\]: WebhookPayloadItem \};$/m,
      ],
    ])('names the type of the whole body when it is %s', async (_kind, body, declaration) => {
      expect(await typedBody(body)).toMatch(declaration);
    });

    it('types form fields as strings (repeated keys as arrays)', async () => {
      const { text } = await sut.schema(formPost);
      expect(text).toContain('name: string;');
      expect(text).toContain('tag: string[];');
      expect(
        typeErrors(
          `${text}\nconst sample: WebhookPayload = { name: 'Ada', tag: ['a', 'b'], message: 'hello world' };\nexport { sample };\n`,
        ),
      ).toEqual([]);
    });
  });

  describe('handler', () => {
    const pairs = (Object.keys(HANDLER_FRAMEWORKS) as HandlerLanguage[]).flatMap((language) =>
      HANDLER_FRAMEWORKS[language].map((framework) => [language, framework] as const),
    );

    it.each(pairs)(
      'writes %s + %s code that verifies our signature in constant time with a timestamp tolerance',
      async (language, framework) => {
        const { text } = await sut.handler(stripeInvoicePaid, { language, framework });
        expect(text).not.toContain('```');
        for (const name of ['hooktrail-id', 'hooktrail-timestamp', 'hooktrail-signature', 'HOOKTRAIL_SECRET'])
          expect(text).toContain(name);
        expect(text).toMatch(/timingSafeEqual|compare_digest|hmac\.Equal/);
        expect(text).toMatch(/TOLERANCE_SECONDS|toleranceSeconds/);
        expect(text).toContain('invoice.paid');
      },
    );

    it.each([
      [
        'an array of records',
        [{ email: 'a@example.com', event: 'delivered' }],
        'type WebhookPayload []any',
        'WebhookPayload = list[Any]',
      ],
      [
        'a map of 1,500 keys',
        Object.fromEntries(Array.from({ length: 1500 }, (_, n) => [`k${n}`, { n }])),
        'type WebhookPayload map[string]any',
        'WebhookPayload = dict[str, Any]',
      ],
      ['a record', { id: 'c_42' }, 'ID string `json:"id"`', 'id: str'],
    ])(
      'types a body that is %s as what it is in Go and Python (a Go struct would refuse an array)',
      async (_kind, body, go, python) => {
        const event = { ...genericJson, body: Buffer.from(JSON.stringify(body)) };
        expect((await sut.handler(event, { language: 'go', framework: 'gin' })).text).toContain(go);
        const { text } = await sut.handler(event, { language: 'python', framework: 'fastapi' });
        expect(text).toContain(python);
        expect(text).not.toMatch(/ k\d+: /);
      },
    );

    it('writes TypeScript that compiles', async () => {
      const { text } = await sut.handler(stripeInvoicePaid, { language: 'typescript', framework: 'nextjs' });
      const diagnostics =
        ts.transpileModule(text, {
          reportDiagnostics: true,
          compilerOptions: { module: ts.ModuleKind.CommonJS },
        }).diagnostics ?? [];
      expect(diagnostics).toEqual([]);
    });
  });

  describe('diagnose', () => {
    it.each([
      ['401', failed(401, null, 'bad signature'), /rejected the request's authentication or signature/],
      ['404', failed(404), /404: nothing is served at that path/],
      [
        '500 with its body',
        failed(500, null, 'TypeError: cannot read id of undefined'),
        /500.*TypeError: cannot read id of undefined/s,
      ],
      ['a time-out', failed(null, 'timed out after 10000 ms', null, 10_003), /did not answer within 10 s/],
      [
        'a refused connection',
        failed(null, 'ECONNREFUSED: connect ECONNREFUSED 1.2.3.4:443'),
        /refused.*start the service/s,
      ],
      ['a TLS error', failed(null, 'CERT_HAS_EXPIRED: certificate has expired'), /TLS handshake/],
      ['DNS', failed(null, 'ENOTFOUND: getaddrinfo ENOTFOUND nope.example'), /could not be resolved/],
      ['429', failed(429), /rate-limits.*Retry-After/s],
    ])('names the cause and the fix for %s', async (_label, delivery, expected) => {
      const { text } = await sut.diagnose(stripeInvoicePaid, [delivery]);
      expect(text).toMatch(expected);
      expect(text).toContain('Fix:');
    });

    it("states the service's own time-out and retry schedule, not fixed text", async () => {
      const configured = new LocalAiEngine({ timeoutMs: 2500, retryDelaysMs: [500, 90_000, 3_600_000] });
      const timedOut = failed(null, 'timed out after 2500 ms', null, 2501);
      expect((await configured.diagnose(stripeInvoicePaid, [timedOut])).text).toContain(
        'did not answer within 2.5 s',
      );
      const limited = (await configured.diagnose(stripeInvoicePaid, [failed(429)])).text;
      expect(limited).toContain('Hooktrail retries after 500 ms, 1.5 min and 1 h');
      expect(limited).toContain('(4 attempts in all)');
      expect((await sut.diagnose(stripeInvoicePaid, [failed(429)])).text).toContain(
        'Hooktrail retries after 5 s, 25 s, 2 min and 10 min',
      );
    });

    it('says when retries are exhausted', async () => {
      const dead: AiDelivery = {
        ...failed(500),
        status: 'dead_letter',
        attempts: Array.from({ length: 5 }, () => attempt(500)),
      };
      expect((await sut.diagnose(stripeInvoicePaid, [dead])).text).toContain('retries are exhausted');
    });

    it('says plainly that there is nothing to diagnose when no attempt failed', async () => {
      const delivered: AiDelivery = {
        destinationUrl: 'https://x.example',
        status: 'delivered',
        responseBody: 'ok',
        attempts: [attempt(200)],
      };
      const { text } = await sut.diagnose(stripeInvoicePaid, [delivered]);
      expect(text).toMatch(/^No delivery of this event has failed/);
      expect(text).toContain('nothing to diagnose');
    });
  });
});
