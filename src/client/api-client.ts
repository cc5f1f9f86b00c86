import type { components, operations } from '../generated/openapi';
import { CliError, describeError, ENDPOINTS_LIST_HINT } from './cli-error';

type Schemas = components['schemas'];
export type Endpoint = Schemas['EndpointDto'];
export type EndpointList = Schemas['EndpointListResponseDto'];
export type CreatedEndpoint = Schemas['EndpointResponseDto'];
export type DestinationList = Schemas['DestinationListResponseDto'];
export type CapturedEvent = Schemas['EventDto'];
export type EventList = Schemas['EventListResponseDto'];
export type EventWithDeliveries = Schemas['EventResponseDto'];
export type ReplayResult = Schemas['ReplayResultDto'];
export type EventListQuery = NonNullable<operations['EventsController_list']['parameters']['query']>;

/** An answer of the API other than 2xx, described with the API's own `message`. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(`${status} ${detail}`);
  }

  static async from(response: Response): Promise<ApiError> {
    const text = await response.text().catch(() => '');
    const detail = messageOf(text) ?? (response.statusText || 'request failed');
    // The endpoint named on the command line was found, then deleted before this request.
    const hint = response.status === 404 && detail === 'endpoint not found' ? ` ${ENDPOINTS_LIST_HINT}` : '';
    return new ApiError(response.status, detail + hint);
  }
}

/** Nest's error shape `{statusCode, error, message}`; `message` is a list for some validation errors. */
function messageOf(text: string): string | undefined {
  try {
    const body: unknown = JSON.parse(text);
    const message = typeof body === 'object' && body !== null ? Reflect.get(body, 'message') : undefined;
    if (typeof message === 'string') return message;
    if (Array.isArray(message)) return message.join('; ');
  } catch {
    // not JSON: the status text says enough
  }
  return undefined;
}

/**
 * True when trying again cannot help: the key or the endpoint is refused or gone. A time-out (408) or a
 * rate limit (429) passes, as a 5xx or a network failure does.
 */
export function isPermanent(error: unknown): boolean {
  return (
    error instanceof ApiError &&
    error.status >= 400 &&
    error.status < 500 &&
    ![408, 429].includes(error.status)
  );
}

/** The HTTP API, with the user's API key (or access token) as the Bearer credential. */
export class HooktrailApi {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  listEndpoints(): Promise<EndpointList> {
    return this.request('GET', '/api/endpoints');
  }

  getEndpoint(endpointId: string): Promise<CreatedEndpoint> {
    return this.request('GET', `/api/endpoints/${encodeURIComponent(endpointId)}`);
  }

  createEndpoint(name: string): Promise<CreatedEndpoint> {
    return this.request('POST', '/api/endpoints', { name });
  }

  listDestinations(endpointId: string): Promise<DestinationList> {
    return this.request('GET', `/api/endpoints/${encodeURIComponent(endpointId)}/destinations`);
  }

  listEvents(endpointId: string, query: EventListQuery): Promise<EventList> {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) search.set(name, String(value));
    return this.request('GET', `${eventsPath(endpointId)}?${search}`);
  }

  getEvent(endpointId: string, eventId: string): Promise<EventWithDeliveries> {
    return this.request('GET', `${eventsPath(endpointId)}/${encodeURIComponent(eventId)}`);
  }

  replay(endpointId: string, eventId: string): Promise<ReplayResult> {
    return this.request('POST', `${eventsPath(endpointId)}/${encodeURIComponent(eventId)}/replay`);
  }

  /** Opens the endpoint's Server-Sent Events stream, resuming after `lastEventId` when given. */
  async openEventStream(endpointId: string, lastEventId: string | undefined, signal: AbortSignal) {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const response = await this.send('GET', `${eventsPath(endpointId)}/stream`, { headers, signal });
    if (!response.ok || !response.body) throw await ApiError.from(response);
    return response;
  }

  private async request<T>(method: string, path: string, body?: object): Promise<T> {
    const response = await this.send(method, path, {
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body && JSON.stringify(body),
    });
    if (!response.ok) throw await ApiError.from(response);
    return (await response.json()) as T;
  }

  private async send(method: string, path: string, init: RequestInit & { headers: Record<string, string> }) {
    try {
      return await fetch(`${this.baseUrl}${path}`, {
        ...init,
        method,
        headers: { ...init.headers, authorization: `Bearer ${this.apiKey}` },
      });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw new CliError(`cannot reach ${this.baseUrl}: ${describeError(error)}`);
    }
  }
}

function eventsPath(endpointId: string): string {
  return `/api/endpoints/${encodeURIComponent(endpointId)}/events`;
}
