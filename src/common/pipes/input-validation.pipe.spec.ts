import { MAX_JSON_DEPTH, unacceptableInput } from './input-validation.pipe';

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let level = 0; level < depth; level++) value = { a: value };
  return value;
};

describe(unacceptableInput.name, () => {
  it.each([
    [undefined, 'body'],
    [{ name: 'Grüße 🎉', metadata: { list: [1, 'two', null] } }, 'body'],
    [{ metadata: nested(MAX_JSON_DEPTH - 1) }, 'body'],
    [{ q: 'text', page: 2 }, 'query'],
  ] as const)('accepts %j as a %s', (value, kind) => {
    expect(unacceptableInput(value, kind)).toBeNull();
  });

  it.each([
    [null, 'the body must be a JSON object'],
    [[{ name: 'x' }], 'the body must be a JSON object'],
    ['text', 'the body must be a JSON object'],
    [{ metadata: nested(MAX_JSON_DEPTH) }, `metadata is nested more than ${MAX_JSON_DEPTH} levels deep`],
    [{ name: nested(100_000) }, `name is nested more than ${MAX_JSON_DEPTH} levels deep`],
    [{ name: 'a\u0000b' }, 'name must not contain NUL characters or unpaired surrogates'],
    [{ metadata: { list: ['\ud800'] } }, 'metadata must not contain NUL characters or unpaired surrogates'],
    [
      { metadata: { 'a\u0000': 1 } },
      'metadata has a property name with NUL characters or unpaired surrogates',
    ],
    [
      JSON.parse('{"filter":{"headers":{"constructor":"y"}}}'),
      'filter has a property named constructor, which is not allowed',
    ],
    [JSON.parse('{"constructor":1}'), 'the body has a property named constructor, which is not allowed'],
  ])('refuses %#: %s', (value, message) => {
    expect(unacceptableInput(value, 'body')).toBe(message);
  });

  it('refuses a NUL in a query parameter, naming it', () => {
    expect(unacceptableInput({ q: 'a\u0000' }, 'query')).toBe(
      'q must not contain NUL characters or unpaired surrogates',
    );
  });
});
