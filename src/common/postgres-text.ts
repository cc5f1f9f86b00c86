/** A UTF-16 surrogate without its other half: no UTF-8 encoding holds it, so neither does PostgreSQL. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * The text with what PostgreSQL's `text` and `jsonb` refuse (NUL, and lone surrogates, which a JSON body
 * may spell as `\u0000` or `\uD800`) replaced by U+FFFD: for text the service writes from someone's input
 * (an audit entry's changes, an AI answer that quotes a captured body), where a refusal would lose the write.
 */
export function postgresText(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
}
