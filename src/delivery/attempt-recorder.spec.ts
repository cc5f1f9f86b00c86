import type { EntityManager } from '@mikro-orm/postgresql';
import type { IssueTracker } from '../issues/issue-tracker';
import type { SecretBox } from '../secrets/secret-box';
import { AttemptRecorder } from './attempt-recorder';

/** A delivery row as the load reads it, with its event's body and a destination without limits. */
function row(id: string) {
  return {
    id,
    event_id: `event-of-${id}`,
    status: 'pending',
    attempt_count: 0,
    last_attempted_at: null,
    endpoint_id: 'endpoint-1',
    method: 'POST',
    headers: {},
    query: '',
    body_text: `{"delivery":"${id}"}`,
    body_bytes: null,
    destination_id: 'destination-1',
    destination_url: 'https://example.test/hooks',
    secret: null,
    is_active: true,
    rate_limit: null,
    rate_limit_period: 'second',
    max_in_flight: null,
    paused: false,
    ordering: 'none',
  };
}

/** A recorder whose loads wait until the test answers them, each with a row per id asked for. */
function recorderWithHeldLoads() {
  const loads: { ids: string[]; answer(): void }[] = [];
  const knex = {
    raw: (_text: string, [ids]: [string[]]) => ({
      options: () =>
        new Promise((resolve) =>
          loads.push({ ids, answer: () => resolve({ rows: [...new Set(ids)].map(row) }) }),
        ),
    }),
  };
  const em = { getKnex: () => knex } as unknown as EntityManager;
  return {
    recorder: new AttemptRecorder(em, {} as SecretBox, {} as IssueTracker),
    loads,
  };
}

describe(AttemptRecorder.name, () => {
  it('gives each attempt of a delivery loaded twice in one batch an object of its own', async () => {
    const { recorder, loads } = recorderWithHeldLoads();
    // Three loads take every slot; the two runs of d4 that come meanwhile share the next batch.
    const first = ['d1', 'd2', 'd3'].map((id) => recorder.loadForAttempt(id));
    const twice = [recorder.loadForAttempt('d4'), recorder.loadForAttempt('d4')];
    for (const load of loads) load.answer();
    await Promise.all(first);
    await new Promise((resolve) => setImmediate(resolve));
    expect(loads.map((load) => load.ids)).toEqual([['d1'], ['d2'], ['d3'], ['d4', 'd4']]);
    loads[3].answer();
    const [one, other] = await Promise.all(twice);

    // One attempt lets go of its body once sent; the other still sends it whole.
    one!.body = Buffer.alloc(0);
    expect(other!.body.toString()).toBe('{"delivery":"d4"}');
  });
});
