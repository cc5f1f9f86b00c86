import { createHmac } from 'node:crypto';

/**
 * The Standard Webhooks scheme under our own header names: `v1,` + base64 HMAC-SHA256 over
 * `${id}.${timestamp}.${body}`, keyed with the destination's secret as UTF-8 bytes.
 */
export function signPayload(secret: string, id: string, timestamp: number, body: Buffer): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(`${id}.${timestamp}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}
