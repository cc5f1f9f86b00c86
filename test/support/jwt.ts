import { createHmac, createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';

type Json = Record<string, unknown>;

const encode = (part: Json) => Buffer.from(JSON.stringify(part)).toString('base64url');

export function decodeJwt(token: string): { header: Json; payload: Record<string, number | string> } {
  const [header, payload] = token
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
  return { header, payload };
}

/** A JWT signed with HMAC by hand, so the tests control the header, claims and key. */
export function hmacJwt(header: Json, payload: Json, secret: string, algorithm = 'sha256'): string {
  const unsigned = `${encode(header)}.${encode(payload)}`;
  return `${unsigned}.${createHmac(algorithm, secret).update(unsigned).digest('base64url')}`;
}

let rsaKey: KeyObject | undefined;

/** A JWT signed RS256 with a key pair made here (the server knows no RSA key). */
export function rs256Jwt(payload: Json): string {
  rsaKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const unsigned = `${encode({ alg: 'RS256', typ: 'JWT' })}.${encode(payload)}`;
  return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(rsaKey).toString('base64url')}`;
}

/** An unsigned JWT (`alg: none`) carrying these claims. */
export function unsignedJwt(payload: Json): string {
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(payload)}.`;
}
