import { GoogleGenerativeAI, type GenerativeModel } from '@google/generative-ai';
import { Logger } from '@nestjs/common';
import type { AiAnswer, AiDelivery, AiEvent, AiProvider, HandlerTarget } from './ai.types';
import { describeRetries, spokenDuration, type DeliveryPolicy } from './delivery-policy';

export interface GeminiOptions {
  apiKey: string;
  model: string;
  baseUrl?: string;
  /** How long a call to Gemini may take. */
  timeoutMs?: number;
  /** The delivery engine's configuration, stated in the diagnosis prompt. */
  delivery: DeliveryPolicy;
}

/** The body is cut to this many bytes in a prompt. */
export const PROMPT_BODY_LIMIT = 16 * 1024;
/** Header and query parameter names whose values are credentials. */
const SECRET_NAME = /authorization|cookie|signature|token|secret|api[-_]?key|password/i;

/**
 * The query as a prompt shows it: the values of parameters named like credentials masked (a sender that
 * authenticates with `?token=` or `?api_key=` on the capture URL).
 */
function describeQuery(query: string): string {
  if (query === '') return '(none)';
  const parameters = [...new URLSearchParams(query)];
  if (!parameters.some(([name]) => SECRET_NAME.test(name))) return query;
  return parameters
    .map(([name, value]) => `${name}=${SECRET_NAME.test(name) ? '[redacted]' : value}`)
    .join('&');
}

/**
 * The event as a prompt shows it: the values of secret headers and query parameters masked, the body cut
 * to a bounded size.
 */
export function describeEvent(event: AiEvent): string {
  const headers = Object.entries(event.headers)
    .map(
      ([name, value]) =>
        `${name}: ${SECRET_NAME.test(name) ? '[redacted]' : Array.isArray(value) ? value.join(', ') : value}`,
    )
    .join('\n');
  const cut = event.body.length > PROMPT_BODY_LIMIT;
  const body = event.body.subarray(0, PROMPT_BODY_LIMIT).toString('utf8');
  return [
    `Method: ${event.method}`,
    `Query: ${describeQuery(event.query)}`,
    `Received at: ${event.receivedAt.toISOString()}`,
    `Headers:\n${headers}`,
    `Body${cut ? ` (first ${PROMPT_BODY_LIMIT} of ${event.body.length} bytes)` : ''}:\n${body}`,
  ].join('\n');
}

/** Strips markdown fences and a leading "Here is ..." line from a model's answer. */
export function cleanOutput(text: string): string {
  let cleaned = text.trim();
  const fenced = /```[\w+-]*\n([\s\S]*?)```/.exec(cleaned);
  if (fenced) cleaned = fenced[1];
  cleaned = cleaned.replace(/^(here('s| is| are)|sure|certainly)[^\n]*:\s*\n/i, '');
  return cleaned.trim();
}

/**
 * True when the text parses as TypeScript and declares at least one interface or type. The compiler is
 * loaded on first use: it adds about 50 MB to a process, which one that never checks a schema should not pay.
 */
export async function isTypeScriptDeclaration(text: string): Promise<boolean> {
  const ts = await import('typescript');
  const { diagnostics } = ts.transpileModule(text, {
    reportDiagnostics: true,
    compilerOptions: { target: ts.ScriptTarget.ES2022 },
  });
  const file = ts.createSourceFile('schema.ts', text, ts.ScriptTarget.ES2022, true);
  return (
    (diagnostics ?? []).length === 0 &&
    file.statements.some(
      (statement) => ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement),
    )
  );
}

/**
 * Gemini through @google/generative-ai. Any error, time-out or quota answer falls back to the local
 * engine's answer (with the reason logged), and a schema that does not parse as TypeScript too.
 */
export class GeminiAiProvider implements AiProvider {
  readonly name = 'gemini';
  private readonly logger = new Logger(GeminiAiProvider.name);
  private readonly model: GenerativeModel;
  private readonly timeoutMs: number;
  private readonly delivery: DeliveryPolicy;

  constructor(
    options: GeminiOptions,
    private readonly fallback: AiProvider,
  ) {
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.delivery = options.delivery;
    this.model = new GoogleGenerativeAI(options.apiKey).getGenerativeModel(
      { model: options.model },
      { baseUrl: options.baseUrl },
    );
  }

  explain(event: AiEvent): Promise<AiAnswer> {
    const prompt = `Explain this webhook request in 2 to 3 plain-English sentences: what sent it (Stripe, GitHub, Shopify, Slack, Twilio, or a generic JSON or form post), what happened, and the key ids and amounts (Stripe amounts are in minor units). Answer with the sentences only.\n\n${describeEvent(event)}`;
    return this.ask(prompt, () => this.fallback.explain(event));
  }

  schema(event: AiEvent): Promise<AiAnswer> {
    const prompt = `Write TypeScript interfaces for this webhook's payload: nested objects as their own exported interfaces, arrays typed from all their elements, optional fields where elements differ, null unions. Answer with the TypeScript code only, no markdown.\n\n${describeEvent(event)}`;
    return this.ask(prompt, () => this.fallback.schema(event), isTypeScriptDeclaration);
  }

  handler(event: AiEvent, target: HandlerTarget): Promise<AiAnswer> {
    const prompt = `Write a complete ${target.language} webhook handler using ${target.framework} for this webhook. It must read the raw body, verify the hooktrail-signature header (format "v1,<base64 HMAC-SHA256>" computed with the secret from the HOOKTRAIL_SECRET environment variable as UTF-8 bytes over "<hooktrail-id>.<hooktrail-timestamp>.<raw body>"; several space-separated signatures may be present) in constant time, reject timestamps more than 5 minutes away, parse the payload into types matching it, handle errors (401 bad signature, 400 bad body, 500 on failure) and answer 200 {"received": true}. Answer with the code only, no markdown.\n\n${describeEvent(event)}`;
    return this.ask(prompt, () => this.fallback.handler(event, target));
  }

  diagnose(event: AiEvent, deliveries: AiDelivery[]): Promise<AiAnswer> {
    const attempts = deliveries
      .map(
        (delivery) =>
          `Destination ${delivery.destinationUrl} (${delivery.status}), last response body: ${delivery.responseBody ?? '(none)'}\n` +
          delivery.attempts
            .map(
              (attempt) =>
                `- ${attempt.at}: code ${attempt.response_code ?? 'none'}, ${attempt.duration_ms} ms, error ${attempt.error ?? 'none'}`,
            )
            .join('\n'),
      )
      .join('\n');
    const { timeoutMs, retryDelaysMs } = this.delivery;
    const engine = `the sender follows no redirects, waits ${spokenDuration(timeoutMs)} at most for an answer, and ${describeRetries(this.delivery).replace('Hooktrail', 'it')} (${retryDelaysMs.length + 1} attempts in all)`;
    const prompt = `Diagnose why delivering this webhook to its destinations failed and say concretely how to fix it (${engine}). If no attempt failed, say so plainly.\n\nDelivery attempts:\n${attempts || '(none)'}\n\n${describeEvent(event)}`;
    return this.ask(prompt, () => this.fallback.diagnose(event, deliveries));
  }

  private async ask(
    prompt: string,
    fallback: () => Promise<AiAnswer>,
    accept: (text: string) => boolean | Promise<boolean> = (text) => text.length > 0,
  ): Promise<AiAnswer> {
    try {
      // A signal, not the client's `timeout` option: that one arms a timer it never clears, which held the
      // process (and the call's closures) for the whole time-out after every answer.
      const result = await this.model.generateContent(prompt, {
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = cleanOutput(result.response.text());
      if (await accept(text)) return { text, provider: 'gemini' };
      this.logger.warn('Gemini answered something unusable; the local engine answers instead');
    } catch (error) {
      this.logger.warn(`Gemini failed (${(error as Error).message}); the local engine answers instead`);
    }
    return fallback();
  }
}
