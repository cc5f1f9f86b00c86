import { localTime, plural } from '../format';
import { href } from '../router';
import type { Delivery, DeliveryAttempt } from '../types';
import { StatusBadge } from './StatusBadge';

const RETRY_NOTE: Partial<Record<Delivery['status'], string>> = {
  pending: 'Waiting for its first attempt.',
  failed: 'The last attempt failed; it is retried automatically.',
  dead_letter: 'All retries failed. Replay the event once the destination is fixed.',
};

/** Every delivery of the event, each with all its attempts. */
export function Deliveries({ deliveries, endpointId }: { deliveries: Delivery[]; endpointId: string }) {
  return (
    <section class="card" aria-labelledby="deliveries-heading">
      <div class="card-head">
        <h2 id="deliveries-heading">Deliveries</h2>
        <span class="muted small">{plural(deliveries.length, 'delivery', 'deliveries')}</span>
      </div>
      {deliveries.length === 0 ? (
        <p class="muted" data-testid="deliveries-empty">
          No deliveries. Events are forwarded to the endpoint’s active destinations whose filter they match:{' '}
          <a href={href.endpoint(endpointId)}>add a destination</a> or change a filter, then press Replay.
        </p>
      ) : (
        <ul class="delivery-list">
          {deliveries.map((delivery) => (
            <DeliveryItem key={delivery.id} delivery={delivery} />
          ))}
        </ul>
      )}
    </section>
  );
}

function DeliveryItem({ delivery }: { delivery: Delivery }) {
  const { attempts } = delivery;
  return (
    <li
      class="delivery"
      data-testid="delivery-row"
      data-delivery-id={delivery.id}
      data-status={delivery.status}
    >
      <div class="delivery-head">
        <code class="url">{delivery.destination.url}</code>
        <StatusBadge status={delivery.status} testId="delivery-status" />
      </div>
      <dl class="facts facts-compact">
        <div>
          <dt>Attempts</dt>
          <dd>{delivery.attempt_count}</dd>
        </div>
        <div>
          <dt>Last response</dt>
          <dd>{codeText(delivery.response_code, delivery.attempt_count > 0)}</dd>
        </div>
        <div>
          <dt>Last attempt</dt>
          <dd>{localTime(delivery.last_attempted_at)}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{localTime(delivery.created_at)}</dd>
        </div>
      </dl>
      {RETRY_NOTE[delivery.status] && <p class="hint">{RETRY_NOTE[delivery.status]}</p>}
      {delivery.destination.id === null && <p class="hint">This destination has since been removed.</p>}
      {attempts.length > 0 && (
        <div class="table-wrap">
          <table class="attempts">
            <caption class="sr-only">Attempts to {delivery.destination.url}, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Time</th>
                <th scope="col">Response</th>
                <th scope="col">Duration</th>
                <th scope="col">Error</th>
                <th scope="col">Response body</th>
              </tr>
            </thead>
            <tbody>
              {attempts.map((attempt, i) => (
                <AttemptRow key={`${attempt.at}-${i}`} attempt={attempt} index={i + 1} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {delivery.response_body && (
        <details class="response-body">
          <summary>Latest response body (first 1 KB)</summary>
          <pre class="code">{delivery.response_body}</pre>
        </details>
      )}
    </li>
  );
}

function AttemptRow({ attempt, index }: { attempt: DeliveryAttempt; index: number }) {
  const ok = attempt.response_code !== null && attempt.response_code >= 200 && attempt.response_code < 300;
  return (
    <tr data-testid="attempt-row" class={ok ? 'attempt-ok' : 'attempt-failed'}>
      <td>{index}</td>
      <td>
        <time dateTime={attempt.at}>{localTime(attempt.at)}</time>
      </td>
      <td>
        <span class={`code-pill ${ok ? 'code-ok' : 'code-bad'}`}>
          {codeText(attempt.response_code, true)}
        </span>
      </td>
      <td>{attempt.duration_ms} ms</td>
      <td class="attempt-error">{attempt.error || '—'}</td>
      <td class="attempt-body">
        {attempt.response_body ? <pre class="code code-small">{attempt.response_body}</pre> : '—'}
      </td>
    </tr>
  );
}

function codeText(code: number | null, attempted: boolean): string {
  if (code !== null) return `${code}${code >= 200 && code < 300 ? ' OK' : ''}`;
  return attempted ? 'No response' : '—';
}
