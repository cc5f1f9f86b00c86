/** What the AI providers read of an event: the captured request, as stored. */
export interface AiEvent {
  method: string;
  headers: Record<string, string | string[]>;
  query: string;
  body: Buffer;
  receivedAt: Date;
}

export interface AiAttempt {
  at: string;
  response_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body?: string | null;
}

export interface AiDelivery {
  destinationUrl: string;
  status: 'pending' | 'failed' | 'delivered' | 'dead_letter';
  responseBody: string | null;
  attempts: AiAttempt[];
}

export type AiProviderName = 'gemini' | 'local';

/** An answer and who wrote it. */
export interface AiAnswer {
  text: string;
  provider: AiProviderName;
}

/** AI calls per user per minute, all AI routes together (each uncached call may cost Gemini quota). */
export const AI_RATE_LIMIT_PER_MIN = 30;

export const HANDLER_FRAMEWORKS = {
  typescript: ['express', 'fastify', 'nextjs'],
  javascript: ['express', 'fastify', 'nextjs'],
  python: ['fastapi'],
  go: ['gin'],
} as const;

export type HandlerLanguage = keyof typeof HANDLER_FRAMEWORKS;
export type HandlerFramework = (typeof HANDLER_FRAMEWORKS)[HandlerLanguage][number];

export interface HandlerTarget {
  language: HandlerLanguage;
  framework: HandlerFramework;
}

/** The four operations, each answered by Gemini or by the local engine. */
export interface AiProvider {
  /** The engine that answers when all is well: an answer from another is a fallback (Gemini failed). */
  readonly name: AiProviderName;
  explain(event: AiEvent): Promise<AiAnswer>;
  schema(event: AiEvent): Promise<AiAnswer>;
  handler(event: AiEvent, target: HandlerTarget): Promise<AiAnswer>;
  diagnose(event: AiEvent, deliveries: AiDelivery[]): Promise<AiAnswer>;
}
