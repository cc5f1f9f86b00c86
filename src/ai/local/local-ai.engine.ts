import type { AiAnswer, AiDelivery, AiEvent, AiProvider, HandlerTarget } from '../ai.types';
import type { DeliveryPolicy } from '../delivery-policy';
import { diagnoseFailures } from './failure-diagnoser';
import { renderHandler } from './handler-templates';
import { header, parsePayload } from './payload';
import { detectProvider } from './provider-detector';
import { generateSchema, rootTypeName } from './schema-generator';

const local = (text: string): AiAnswer => ({ text, provider: 'local' });

/** A second sentence for an event whose sender's facts say nothing more (an explanation has 2 to 3). */
function bodyFact(event: AiEvent): string {
  if (event.body.length === 0) return 'It has no body: what it says is in its method, query and headers.';
  const type = header(event, 'content-type');
  return `Its body is ${event.body.length} bytes${type ? ` of ${type}` : ''}.`;
}

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
    const facts = detection.facts.length > 0 ? detection.facts.slice(0, 2) : [bodyFact(event)];
    return local([first, ...facts].join(' '));
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
