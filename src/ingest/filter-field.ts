import { filterRuleError } from './filter';

/** A filter as the API shows it in examples: a rule on the body and one on a header. */
export const FILTER_EXAMPLE = { body: { type: { $startsWith: 'invoice.' } }, headers: { 'x-env': 'live' } };

/** A filter as the API takes it: null, or a valid rule (else the message names the path at fault). */
export function filterFieldError(value: unknown): string | null {
  return value === null ? null : filterRuleError(value, 'filter');
}
