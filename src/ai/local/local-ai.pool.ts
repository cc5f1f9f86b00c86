import { type OnModuleDestroy, ServiceUnavailableException } from '@nestjs/common';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import type { AiAnswer, AiDelivery, AiEvent, AiProvider, HandlerTarget } from '../ai.types';
import type { DeliveryPolicy } from '../delivery-policy';
import type { LocalAiTask } from './local-ai.worker';

/** A thread left idle this long ends; the next call starts another. */
const IDLE_MS = 60_000;

/**
 * An answer takes at most this long; past it the thread is stopped (the next call starts another) and the
 * call is answered 503. A legible payload is answered in about a second at most (a 9-MiB array of 60,000
 * records: 0.5 s; a map of 150,000 keys: 0.9 s), but quicktype gives each record of a distinct shape an
 * interface of its own, in time that grows faster than their number: 8 objects of 500 such records (1.3 MB)
 * take more than a minute.
 */
export const LOCAL_AI_TIMEOUT_MS = 15_000;

/**
 * The local engine on a thread of its own. Parsing a body of up to CAPTURE_MAX_BODY_BYTES and typing it
 * (quicktype) take hundreds of milliseconds on a large payload, and far longer on some: on the API's
 * thread, that held up every capture and request of the process meanwhile. One thread (AI calls are
 * limited to 30 a minute per user; more wait their turn); it starts with the first call and ends after a
 * minute without one.
 */
export class LocalAiPool implements AiProvider, OnModuleDestroy {
  readonly name = 'local';
  private readonly pool: Piscina<LocalAiTask, AiAnswer>;

  constructor(policy: DeliveryPolicy) {
    this.pool = new Piscina({
      filename: join(__dirname, 'local-ai.worker.js'),
      workerData: policy,
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: IDLE_MS,
    });
  }

  explain(event: AiEvent): Promise<AiAnswer> {
    return this.run({ event, operation: 'explain' });
  }

  schema(event: AiEvent): Promise<AiAnswer> {
    return this.run({ event, operation: 'schema' });
  }

  handler(event: AiEvent, target: HandlerTarget): Promise<AiAnswer> {
    return this.run({ event, operation: 'handler', target });
  }

  diagnose(event: AiEvent, deliveries: AiDelivery[]): Promise<AiAnswer> {
    return this.run({ event, operation: 'diagnose', deliveries });
  }

  async onModuleDestroy(): Promise<void> {
    await this.pool.destroy();
  }

  private async run(task: LocalAiTask): Promise<AiAnswer> {
    const signal = AbortSignal.timeout(LOCAL_AI_TIMEOUT_MS);
    try {
      return await this.pool.run(task, { signal });
    } catch (error) {
      if (!signal.aborted) throw error;
      throw new ServiceUnavailableException(
        `the local AI engine could not analyse this event within ${LOCAL_AI_TIMEOUT_MS / 1000} s: its payload is too large or too irregular to type`,
      );
    }
  }
}
