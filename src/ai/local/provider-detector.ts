import type { AiEvent } from '../ai.types';
import { header, isRecord, type Payload, pick, pickString } from './payload';

/** What the local engine recognises of a webhook: who sent it, what happened, and the key facts. */
export interface Detection {
  provider: string;
  /** The event type in the provider's words (`invoice.paid`, `push`, `orders/create`), when there is one. */
  eventType?: string;
  /** Sentences about what happened and the key ids and amounts. */
  facts: string[];
}

const ZERO_DECIMAL = new Set([
  'jpy',
  'krw',
  'vnd',
  'clp',
  'xof',
  'xaf',
  'ugx',
  'pyg',
  'rwf',
  'kmf',
  'gnf',
  'djf',
  'bif',
  'mga',
  'vuv',
  'xpf',
]);

/** Stripe amounts are in the currency's smallest unit. */
export function formatMinorUnits(amount: number, currency: string): string {
  const code = currency.toUpperCase();
  const value = ZERO_DECIMAL.has(currency.toLowerCase()) ? amount : amount / 100;
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: code }).format(value);
  } catch {
    return `${value} ${code}`;
  }
}

function listIds(values: (string | undefined)[]): string {
  return values.filter(Boolean).join(', ');
}

function stripe(event: AiEvent, payload: Payload): Detection | null {
  if (payload.kind !== 'json') return null;
  const body = payload.value;
  const signed = header(event, 'stripe-signature') !== undefined;
  if (!signed && !(pick(body, 'object') === 'event' && typeof pick(body, 'type') === 'string')) return null;
  const type = pickString(body, 'type');
  const object = pick(body, 'data.object');
  const facts: string[] = [];
  const objectId = pickString(object, 'id');
  const objectKind = pickString(object, 'object') ?? 'object';
  const amount = ['amount_paid', 'amount_due', 'amount', 'amount_total']
    .map((key) => pick(object, key))
    .find((value) => typeof value === 'number');
  const currency = pickString(object, 'currency');
  const customer = pickString(object, 'customer');
  const money = typeof amount === 'number' && currency ? ` for ${formatMinorUnits(amount, currency)}` : '';
  if (objectId)
    facts.push(`It concerns ${objectKind} ${objectId}${money}${customer ? ` of customer ${customer}` : ''}.`);
  const id = pickString(body, 'id');
  if (id)
    facts.push(`The Stripe event id is ${id}${pick(body, 'livemode') === false ? ' (test mode)' : ''}.`);
  return { provider: 'Stripe', eventType: type, facts };
}

function github(event: AiEvent, payload: Payload): Detection | null {
  const type = header(event, 'x-github-event');
  if (!type) return null;
  const body = payload.kind === 'json' ? payload.value : undefined;
  const repository = pickString(body, 'repository.full_name');
  const sender = pickString(body, 'sender.login');
  const action = pickString(body, 'action');
  const facts: string[] = [];
  if (type === 'push') {
    const commits = pick(body, 'commits');
    const count = Array.isArray(commits) ? commits.length : 0;
    const ref = pickString(body, 'ref')?.replace('refs/heads/', '');
    facts.push(
      `${sender ?? 'Someone'} pushed ${count} commit${count === 1 ? '' : 's'} to ${ref ?? 'a branch'} of ${repository ?? 'a repository'}.`,
    );
  } else if (type === 'pull_request') {
    facts.push(
      `Pull request #${pickString(body, 'number') ?? '?'} "${pickString(body, 'pull_request.title') ?? ''}" in ${repository ?? 'a repository'} was ${action ?? 'changed'} by ${sender ?? 'someone'}.`,
    );
  } else if (type === 'issues') {
    facts.push(
      `Issue #${pickString(body, 'issue.number') ?? '?'} "${pickString(body, 'issue.title') ?? ''}" in ${repository ?? 'a repository'} was ${action ?? 'changed'} by ${sender ?? 'someone'}.`,
    );
  } else if (repository) {
    facts.push(
      `It concerns ${repository}${action ? ` (action: ${action})` : ''}${sender ? `, triggered by ${sender}` : ''}.`,
    );
  }
  const delivery = header(event, 'x-github-delivery');
  if (delivery) facts.push(`The GitHub delivery id is ${delivery}.`);
  return { provider: 'GitHub', eventType: type, facts };
}

function shopify(event: AiEvent, payload: Payload): Detection | null {
  const topic = header(event, 'x-shopify-topic');
  if (!topic) return null;
  const body = payload.kind === 'json' ? payload.value : undefined;
  const shop = header(event, 'x-shopify-shop-domain');
  const facts: string[] = [];
  const name = pickString(body, 'name') ?? pickString(body, 'id');
  const total = pickString(body, 'total_price');
  const currency = pickString(body, 'currency');
  const email = pickString(body, 'email') ?? pickString(body, 'customer.email');
  if (name)
    facts.push(
      `It concerns ${topic.split('/')[0].replace(/s$/, '')} ${name}${total ? ` totalling ${total} ${currency ?? ''}`.trimEnd() : ''}${email ? ` for ${email}` : ''}.`,
    );
  if (shop) facts.push(`The shop is ${shop}.`);
  return { provider: 'Shopify', eventType: topic, facts };
}

function slack(event: AiEvent, payload: Payload): Detection | null {
  const body = payload.kind === 'json' ? payload.value : undefined;
  const type = pickString(body, 'type');
  if (!header(event, 'x-slack-signature') && type !== 'url_verification' && type !== 'event_callback')
    return null;
  const innerType = pickString(body, 'event.type');
  const facts: string[] = [];
  if (type === 'url_verification')
    facts.push('Slack is verifying the URL: the handler must answer with the `challenge` value.');
  if (innerType)
    facts.push(
      `The inner event is ${innerType}${pickString(body, 'event.channel') ? ` in channel ${pickString(body, 'event.channel')}` : ''}${pickString(body, 'event.user') ? ` by user ${pickString(body, 'event.user')}` : ''}.`,
    );
  const team = pickString(body, 'team_id');
  if (team) facts.push(`The workspace (team) id is ${team}.`);
  return { provider: 'Slack', eventType: innerType ?? type, facts };
}

function twilio(event: AiEvent, payload: Payload): Detection | null {
  const fields = payload.kind === 'form' ? payload.fields : undefined;
  if (!header(event, 'x-twilio-signature') && !fields?.AccountSid) return null;
  const get = (key: string) => {
    const value = fields?.[key];
    return Array.isArray(value) ? value[0] : value;
  };
  const facts: string[] = [];
  const sid = get('MessageSid') ?? get('CallSid');
  if (get('MessageSid'))
    facts.push(
      `A message ${get('SmsStatus') ?? get('MessageStatus') ?? ''} from ${get('From') ?? '?'} to ${get('To') ?? '?'}${get('Body') ? `: "${get('Body')}"` : ''}.`.replace(
        '  ',
        ' ',
      ),
    );
  else if (get('CallSid'))
    facts.push(
      `A call from ${get('From') ?? '?'} to ${get('To') ?? '?'} is ${get('CallStatus') ?? 'in progress'}.`,
    );
  facts.push(`Ids: ${listIds([sid, get('AccountSid') && `account ${get('AccountSid')}`])}.`);
  return {
    provider: 'Twilio',
    eventType: get('SmsStatus') ?? get('MessageStatus') ?? get('CallStatus'),
    facts,
  };
}

function generic(payload: Payload): Detection {
  if (payload.kind === 'json') {
    const body = payload.value;
    const type = ['type', 'event', 'event_type', 'topic', 'action']
      .map((key) => pickString(body, key))
      .find(Boolean);
    const keys = isRecord(body) ? Object.keys(body) : [];
    const id = pickString(body, 'id');
    const facts = [
      Array.isArray(body)
        ? `The body is a JSON array of ${body.length} items.`
        : `Its top-level fields are ${keys.slice(0, 8).join(', ')}${keys.length > 8 ? ', ...' : ''}.`,
    ];
    if (id) facts.push(`Its id is ${id}.`);
    return { provider: 'a generic JSON sender', eventType: type, facts };
  }
  if (payload.kind === 'form') {
    const keys = Object.keys(payload.fields);
    return {
      provider: 'a form post',
      facts: [`It carries the fields ${keys.slice(0, 8).join(', ')}${keys.length > 8 ? ', ...' : ''}.`],
    };
  }
  if (payload.kind === 'text')
    return {
      provider: 'a plain-text sender',
      facts: [`The body is ${payload.text.length} characters of text.`],
    };
  if (payload.kind === 'binary')
    return { provider: 'a binary upload', facts: [`The body is ${payload.size} bytes that are not text.`] };
  return { provider: 'a request without a body', facts: [] };
}

export function detectProvider(event: AiEvent, payload: Payload): Detection {
  return (
    stripe(event, payload) ??
    github(event, payload) ??
    shopify(event, payload) ??
    slack(event, payload) ??
    twilio(event, payload) ??
    generic(payload)
  );
}
