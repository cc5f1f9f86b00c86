import type { AiAnswer, AiDelivery, AiEvent, AiProvider, HandlerTarget } from '../ai.types';
import type { DeliveryPolicy } from '../delivery-policy';
import { diagnoseFailures } from './failure-diagnoser';
import { renderHandler } from './handler-templates';
import { parsePayload } from './payload';
import { detectProvider } from './provider-detector';
import { generateSchema, rootTypeName } from './schema-generator';

const local = (text: string): AiAnswer => ({ text, provider: 'local' });

/**
 * The AI operations without a model or network: deterministic answers from the provider's known
 * signatures, real type inference over the payload (quicktype), handler templates, and the delivery
 * attempts' codes and errors.
 */
export class LocalAiEngine implements AiProvider {
  readonly name = 'local';
  constructor(private readonly policy: DeliveryPolicy) {}

  async explain(event: AiEvent): Promise<AiAnswer> {
    const payload = parsePayload(event);
    const detection = detectProvider(event, payload);
    const sender = detection.provider.startsWith('a ')
      ? `This webhook looks like ${detection.provider}`
      : `This is a ${detection.provider} webhook`;
    const what = detection.eventType ? ` reporting "${detection.eventType}"` : '';
    const first = `${sender}${what}, sent as ${event.method} at ${event.receivedAt.toISOString()}.`;
    return local([first, ...detection.facts.slice(0, 2)].join(' '));
  }

  async schema(event: AiEvent): Promise<AiAnswer> {
    const payload = parsePayload(event);
    const detection = detectProvider(event, payload);
    return local(await generateSchema(payload, rootTypeName(detection.provider, detection.eventType)));
  }

  async handler(event: AiEvent, target: HandlerTarget): Promise<AiAnswer> {
    const payload = parsePayload(event);
    const detection = detectProvider(event, payload);
    const rootName = rootTypeName(detection.provider, detection.eventType);
    const schema = await generateSchema(payload, rootName);
    return local(
      renderHandler({
        target,
        payload,
        schema,
        rootName,
        provider: detection.provider,
        eventType: detection.eventType,
      }),
    );
  }

  async diagnose(_event: AiEvent, deliveries: AiDelivery[]): Promise<AiAnswer> {
    return local(diagnoseFailures(deliveries, this.policy));
  }
}
