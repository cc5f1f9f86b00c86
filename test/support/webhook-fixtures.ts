import { api, registerUser, type RegisteredUser } from './api-client';

export interface EndpointFixture {
  user: RegisteredUser;
  endpointId: string;
  captureUrl: string;
}

/** A user with one endpoint, made through the API. */
export async function createEndpoint(baseUrl: string, user?: RegisteredUser): Promise<EndpointFixture> {
  const owner = user ?? (await registerUser(baseUrl));
  const created = await api(baseUrl, 'POST', '/api/endpoints', {
    token: owner.accessToken,
    body: { name: 'Payments' },
  });
  if (created.status !== 201)
    throw new Error(`create endpoint: ${created.status} ${JSON.stringify(created.body)}`);
  const endpoint = created.body.endpoint;
  return { user: owner, endpointId: endpoint.id, captureUrl: `${baseUrl}/in/${endpoint.public_token}` };
}

export async function addDestination(
  baseUrl: string,
  fixture: EndpointFixture,
  url: string,
  secret?: string,
): Promise<string> {
  const created = await api(baseUrl, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
    token: fixture.user.accessToken,
    body: secret === undefined ? { url } : { url, secret },
  });
  if (created.status !== 201)
    throw new Error(`add destination: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.destination.id;
}

/** Pauses (or resumes) a destination of the fixture's endpoint. */
export async function setPaused(
  baseUrl: string,
  fixture: EndpointFixture,
  destinationId: string,
  paused: boolean,
): Promise<void> {
  const changed = await api(
    baseUrl,
    'PATCH',
    `/api/endpoints/${fixture.endpointId}/destinations/${destinationId}`,
    { token: fixture.user.accessToken, body: { paused } },
  );
  if (changed.status !== 200)
    throw new Error(`pause destination: ${changed.status} ${JSON.stringify(changed.body)}`);
}

/** Sends a webhook to the capture URL and returns the stored event id. */
export async function capture(
  fixture: EndpointFixture,
  body: string | Buffer = '{"type":"invoice.paid"}',
  options: { method?: string; headers?: Record<string, string>; query?: string } = {},
): Promise<string> {
  const response = await fetch(`${fixture.captureUrl}${options.query ? `?${options.query}` : ''}`, {
    method: options.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body,
  });
  const answer = (await response.json()) as { id?: string };
  if (response.status !== 200 || !answer.id)
    throw new Error(`capture: ${response.status} ${JSON.stringify(answer)}`);
  return answer.id;
}

export async function getEvent(baseUrl: string, fixture: EndpointFixture, eventId: string) {
  const response = await api(baseUrl, 'GET', `/api/endpoints/${fixture.endpointId}/events/${eventId}`, {
    token: fixture.user.accessToken,
  });
  if (response.status !== 200)
    throw new Error(`get event: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.event;
}

/** Polls the event until `predicate` holds (or fails after `timeoutMs`). */
export async function waitForEvent(
  baseUrl: string,
  fixture: EndpointFixture,
  eventId: string,
  predicate: (event: Record<string, any>) => boolean, // eslint-disable-line @typescript-eslint/no-explicit-any
  timeoutMs = 20_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = await getEvent(baseUrl, fixture, eventId);
    if (predicate(event)) return event;
    if (Date.now() > deadline) throw new Error(`event never matched; last seen: ${JSON.stringify(event)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const hasStatus = (status: string) => (event: Record<string, unknown>) => event.status === status;
