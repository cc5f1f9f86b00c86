import { randomBytes } from 'node:crypto';
import { SecretBox, SecretUnreadableError } from './secret-box';

describe(SecretBox.name, () => {
  const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];

  it('seals a secret so that it does not show, differently each time, and opens it', () => {
    const box = new SecretBox(newKey);
    const [first, second] = [box.seal('whsec_plain'), box.seal('whsec_plain')];
    expect(first).not.toContain('whsec_plain');
    expect(first).not.toBe(second);
    expect(first.startsWith(`v1.${box.currentKeyId}.`)).toBe(true);
    expect(SecretBox.keyIdOf(first)).toBe(box.currentKeyId);
    expect([box.open(first), box.open(second)]).toEqual(['whsec_plain', 'whsec_plain']);
  });

  it('opens values sealed under the previous key, and seals under the current one', () => {
    const sealedBefore = new SecretBox(oldKey).seal('rotated');
    const box = new SecretBox(newKey, oldKey);
    expect(box.open(sealedBefore)).toBe('rotated');
    expect(SecretBox.keyIdOf(box.seal('rotated'))).toBe(SecretBox.keyId(newKey));
  });

  it('refuses a value under a key it does not have, an altered value, and one that is not sealed', () => {
    const sealed = new SecretBox(oldKey).seal('secret');
    expect(() => new SecretBox(newKey).open(sealed)).toThrow(SecretUnreadableError);
    const parts = sealed.split('.');
    const altered = Buffer.from(parts[3], 'base64url');
    altered[0] ^= 1;
    const tampered = [...parts.slice(0, 3), altered.toString('base64url')].join('.');
    expect(() => new SecretBox(oldKey).open(tampered)).toThrow(SecretUnreadableError);
    expect(() => new SecretBox(oldKey).open('plain text')).toThrow(SecretUnreadableError);
    expect(SecretBox.keyIdOf('plain text')).toBeUndefined();
  });
});
