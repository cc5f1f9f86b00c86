import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import { postgresText } from '../common/postgres-text';
import type { AiAnswer, AiProvider, HandlerTarget } from './ai.types';
import { AiRepository } from './ai.repository';

export const AI_PROVIDER = Symbol('AI_PROVIDER');

type Operation = 'explain' | 'schema' | 'handler' | 'diagnose';

/**
 * The AI operations on a caller's event, cached per event, operation and parameters. A diagnosis is
 * cached together with the attempts it read, so a new attempt gets a new diagnosis (which drops the old
 * one). Only the configured engine's answers are cached, not a fallback's.
 */
@Injectable()
export class AiService {
  constructor(
    private readonly repository: AiRepository,
    @Inject(AI_PROVIDER) private readonly provider: AiProvider,
  ) {}

  explain(endpointId: string, eventId: string): Promise<AiAnswer> {
    return this.answer(endpointId, eventId, 'explain', '', (event) => this.provider.explain(event));
  }

  schema(endpointId: string, eventId: string): Promise<AiAnswer> {
    return this.answer(endpointId, eventId, 'schema', '', (event) => this.provider.schema(event));
  }

  handler(endpointId: string, eventId: string, target: HandlerTarget): Promise<AiAnswer> {
    return this.answer(endpointId, eventId, 'handler', `${target.language}/${target.framework}`, (event) =>
      this.provider.handler(event, target),
    );
  }

  /**
   * `mayAsk`, when given, is asked before the engine is (a cached diagnosis is answered without it): false
   * throws a ThrottlerException (429) and asks nothing.
   */
  async diagnose(endpointId: string, eventId: string, mayAsk?: () => Promise<boolean>): Promise<AiAnswer> {
    const deliveries = await this.repository.deliveries(eventId);
    const attemptsSeen = deliveries.reduce((count, delivery) => count + delivery.attempts.length, 0);
    return this.answer(
      endpointId,
      eventId,
      'diagnose',
      `${deliveries.length}:${attemptsSeen}`,
      (event) => this.provider.diagnose(event, deliveries),
      mayAsk,
    );
  }

  private async answer(
    endpointId: string,
    eventId: string,
    operation: Operation,
    parameters: string,
    ask: (event: NonNullable<Awaited<ReturnType<AiRepository['findEvent']>>>) => Promise<AiAnswer>,
    mayAsk?: () => Promise<boolean>,
  ): Promise<AiAnswer> {
    const event = await this.repository.findEvent(endpointId, eventId);
    if (!event) throw new NotFoundException('event not found');
    const cached = await this.repository.cached(eventId, operation, parameters);
    if (cached) return cached;
    if (mayAsk && !(await mayAsk())) throw new ThrottlerException();
    // An answer may quote the body, whose JSON can spell a NUL ("\u0000") that PostgreSQL's text refuses.
    const asked = await ask(event);
    const answer = { ...asked, text: postgresText(asked.text) };
    // A fallback's answer (the local engine's, Gemini having failed) is not kept: the next call asks Gemini
    // again, instead of being answered by the fallback for good.
    if (answer.provider === this.provider.name)
      await this.repository.store(eventId, operation, parameters, answer);
    return answer;
  }
}
