import { registerDecorator, type ValidationOptions } from 'class-validator';

export const URL_MAX_LENGTH = 2048;
export const SECRET_MAX_LENGTH = 256;
export const HTTPS_URL_MESSAGE = 'url must be an absolute https:// URL';

function hasControlCharacter(value: string): boolean {
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * An absolute `https://` URL with a host, no whitespace or control characters, at most 2048 characters; its
 * user information, if any, valid percent-encoding (it is sent as Basic credentials, decoded).
 */
export function isAbsoluteHttpsUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > URL_MAX_LENGTH) return false;
  if (!/^https:\/\//i.test(value) || /\s/.test(value) || hasControlCharacter(value)) return false;
  try {
    const url = new URL(value);
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
    return url.protocol === 'https:' && url.hostname !== '';
  } catch {
    return false;
  }
}

export function IsAbsoluteHttpsUrl(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isAbsoluteHttpsUrl',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: HTTPS_URL_MESSAGE, ...options },
      validator: { validate: isAbsoluteHttpsUrl },
    });
}
