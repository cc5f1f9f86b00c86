import { workerData } from 'node:worker_threads';
import type { AiAnswer, AiDelivery, AiEvent, HandlerTarget } from '../ai.types';
import type { DeliveryPolicy } from '../delivery-policy';
import { LocalAiEngine } from './local-ai.engine';

/** One operation of the local engine, as LocalAiPool posts it to its thread. */
export type LocalAiTask = { event: AiEvent } & (
  | { operation: 'explain' | 'schema' }
  | { operation: 'handler'; target: HandlerTarget }
  | { operation: 'diagnose'; deliveries: AiDelivery[] }
);

/** The thread's engine, with the delivery policy LocalAiPool gave the thread. */
const engine = new LocalAiEngine(workerData as DeliveryPolicy);

/**
 * The local engine's thread (piscina runs this module's default export for each task). The event's body
 * arrives as a Uint8Array (a Buffer does not survive the copy between threads): it is a Buffer again here.
 */
export default function run(task: LocalAiTask): Promise<AiAnswer> {
  const { body } = task.event;
  const event = { ...task.event, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
  switch (task.operation) {
    case 'explain':
      return engine.explain(event);
    case 'schema':
      return engine.schema(event);
    case 'handler':
      return engine.handler(event, task.target);
    case 'diagnose':
      return engine.diagnose(event, task.deliveries);
  }
}
