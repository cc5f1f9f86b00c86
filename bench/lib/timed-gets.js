/* global AbortSignal */
// Timed reads of the service's API (scenarios 3 and 8): the same GET again and again, one after another,
// each timed from the request to its parsed answer.
const { READ_CASE_BUDGET_MS } = require('./config');
const { notes, ledger } = require('./results');
const { now } = require('./load');

/**
 * GETs `url` with the access token `token` `requests` times after 5 unmeasured ones. Bounded: it stops
 * after READ_CASE_BUDGET_MS even if not all its requests were made, and at the first answer that is not
 * 2xx (a service error in the ledger, and a note that begins with `label`). Returns the measured times and
 * the last answer's body.
 */
async function timedGets(url, token, requests, label) {
  const timings = [];
  let body;
  const caseDeadline = Date.now() + READ_CASE_BUDGET_MS;
  for (let index = 0; index < requests + 5 && Date.now() < caseDeadline; index += 1) {
    const begin = now();
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(30_000),
    });
    body = await response.json();
    if (!response.ok) {
      ledger.serviceErrors += 1;
      notes.push(`${label}: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
      break;
    }
    if (index >= 5) timings.push(now() - begin);
  }
  return { timings, body };
}

module.exports = { timedGets };
