import type { AiAttempt, AiDelivery } from '../ai.types';
import { describeRetries, spokenDuration, type DeliveryPolicy } from '../delivery-policy';

function describeCause(attempt: AiAttempt, delivery: AiDelivery, policy: DeliveryPolicy): string {
  const code = attempt.response_code;
  const url = delivery.destinationUrl;
  const body = delivery.responseBody ? ` It answered: "${delivery.responseBody.slice(0, 200)}".` : '';
  if (code === 401 || code === 403) {
    return `${url} answered ${code}: it rejected the request's authentication or signature check.${body} Fix: make sure the handler verifies the hooktrail-signature with the same secret as the destination in Hooktrail, over the raw body bytes (not re-serialised JSON), and that its clock is within the timestamp tolerance; if it expects an API key or basic auth, it cannot come from Hooktrail, so exempt the webhook route.`;
  }
  if (code === 404)
    return `${url} answered 404: nothing is served at that path.${body} Fix: check the destination URL (path, trailing slash, route prefix) against the route your app really exposes, and update the destination.`;
  if (code === 405)
    return `${url} answered 405: the route does not accept the original method.${body} Fix: let the route accept the webhook's method (Hooktrail forwards the method it received), usually POST.`;
  if (code === 413)
    return `${url} answered 413: the body is larger than it accepts.${body} Fix: raise the request body limit of the server or proxy in front of it.`;
  if (code === 429)
    return `${url} answered 429: it rate-limits the deliveries.${body} Fix: raise the limit for the webhook route or exempt it; honour its Retry-After by spacing the retries (${describeRetries(policy)}).`;
  if (code !== null && code >= 300 && code < 400)
    return `${url} answered ${code}, a redirect, and Hooktrail does not follow redirects. Fix: point the destination at the final URL (often https instead of http, or a trailing slash).`;
  if (code !== null && code >= 500)
    return `${url} answered ${code}: the destination's own code failed.${body} Fix: look at its logs for the error at ${attempt.at}; answer 2xx as soon as the webhook is stored and process it afterwards.`;
  if (code !== null)
    return `${url} answered ${code}, which is not a 2xx.${body} Fix: answer 2xx once the webhook is accepted.`;
  const error = attempt.error ?? 'unknown error';
  if (
    /timed out|timeout|ETIMEDOUT|ECONNABORTED/i.test(error) ||
    attempt.duration_ms >= policy.timeoutMs * 0.95
  ) {
    return `${url} did not answer within ${spokenDuration(policy.timeoutMs)} (${error}). Fix: answer 2xx right after storing the webhook and do the slow work asynchronously (a queue or background job).`;
  }
  if (/private|reserved/i.test(error))
    return `The connection to ${url} was refused because it resolves to a private or reserved address (${error}). Fix: use a public HTTPS address, or set DELIVERY_ALLOW_PRIVATE_NETWORKS=true on a self-hosted Hooktrail for local development.`;
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo/i.test(error))
    return `The host of ${url} could not be resolved (${error}). Fix: check the domain name for typos and that its DNS record exists.`;
  if (/CERT|SSL|TLS|self.signed|certificate/i.test(error))
    return `The TLS handshake with ${url} failed (${error}). Fix: serve a valid certificate chain from a public CA (include the intermediates) for that exact host name.`;
  if (/ECONNREFUSED/i.test(error))
    return `The connection to ${url} was refused (${error}): nothing listens on that host and port. Fix: start the service, check the port, and that a firewall lets HTTPS through.`;
  if (/ECONNRESET|socket hang up|EPIPE/i.test(error))
    return `${url} closed the connection without answering (${error}). Fix: check its logs for a crash and any proxy in front of it.`;
  return `The request to ${url} failed: ${error}. Fix: check that the destination is reachable over HTTPS from the internet.`;
}

/** Why the deliveries failed and how to fix it, from their attempts; plain when nothing failed. */
export function diagnoseFailures(deliveries: AiDelivery[], policy: DeliveryPolicy): string {
  const failing = deliveries.filter((delivery) => delivery.attempts.some((attempt) => !isSuccess(attempt)));
  if (deliveries.length === 0)
    return 'This event has no delivery yet, so there is nothing to diagnose: add an active destination to the endpoint, then replay the event.';
  if (failing.length === 0) {
    return `No delivery of this event has failed: ${deliveries.length} deliver${deliveries.length === 1 ? 'y' : 'ies'}, ${deliveries.filter((delivery) => delivery.status === 'delivered').length} delivered and the rest still waiting for their first attempt. There is nothing to diagnose.`;
  }
  return failing
    .map((delivery) => {
      const failed = delivery.attempts.filter((attempt) => !isSuccess(attempt));
      const last = failed[failed.length - 1];
      const state =
        delivery.status === 'delivered'
          ? `It was delivered in the end, after ${failed.length} failed attempt${failed.length === 1 ? '' : 's'}.`
          : delivery.status === 'dead_letter'
            ? `All ${delivery.attempts.length} attempts failed, so retries are exhausted (dead letter): after fixing it, replay the event.`
            : `${failed.length} attempt${failed.length === 1 ? '' : 's'} failed so far; ${describeRetries(policy)} (${policy.retryDelaysMs.length + 1} attempts in all).`;
      const codes = [...new Set(failed.map((attempt) => attempt.response_code ?? 'no response'))].join(', ');
      return `${describeCause(last, delivery, policy)} ${state} (Failed attempts answered: ${codes}.)`;
    })
    .join('\n\n');
}

function isSuccess(attempt: AiAttempt): boolean {
  return attempt.response_code !== null && attempt.response_code >= 200 && attempt.response_code < 300;
}
