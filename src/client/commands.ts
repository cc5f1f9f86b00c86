import { type EventListQuery, HooktrailApi } from './api-client';
import { CliError } from './cli-error';
import { configPath, normaliseUrl, readConfig, resolveSettings, saveConfig } from './config-store';
import { findEndpoint } from './endpoint-resolution';
import {
  createdEndpointView,
  destinationsView,
  endpointsView,
  eventsView,
  eventView,
  replayView,
} from './human-views';
import { ListenSession } from './listen-session';
import type { Output } from './output';

export interface CommandContext {
  output: Output;
  env: NodeJS.ProcessEnv;
}

/** As commander parses them: the API checks the values (an unknown status, say) and names what is wrong. */
export type EventsListOptions = Pick<EventListQuery, 'status' | 'q' | 'limit' | 'page'>;

export interface ListenCommandOptions {
  forwardTo: URL;
  since?: Date;
}

async function connect({ env }: CommandContext): Promise<HooktrailApi> {
  const settings = resolveSettings(env, await readConfig(configPath(env)));
  if (!settings.apiKey)
    throw new CliError('no API key: set HOOKTRAIL_API_KEY or run hooktrail login --api-key <key>');
  return new HooktrailApi(settings.url, settings.apiKey);
}

/** Saves the URL and key once the API has accepted the key: a refused key is never saved. */
export async function login(
  context: CommandContext,
  options: { url?: string; apiKey: string },
): Promise<void> {
  const path = configPath(context.env);
  const url = options.url
    ? normaliseUrl(options.url)
    : resolveSettings(context.env, await readConfig(path)).url;
  await context.output.busy('Checking the API key', () =>
    new HooktrailApi(url, options.apiKey).listEndpoints(),
  );
  await saveConfig(path, { url, api_key: options.apiKey });
  context.output.result(
    { url, config_path: path },
    (saved) => `Logged in to ${saved.url}; the key is kept in ${saved.config_path}`,
  );
}

export async function listEndpoints(context: CommandContext): Promise<void> {
  const api = await connect(context);
  const answer = await context.output.busy('Loading endpoints', () => api.listEndpoints());
  context.output.result(answer, endpointsView);
}

export async function createEndpoint(context: CommandContext, name: string): Promise<void> {
  const api = await connect(context);
  const answer = await context.output.busy('Creating the endpoint', () => api.createEndpoint(name));
  context.output.result(answer, createdEndpointView);
}

export async function listDestinations(context: CommandContext, endpointReference: string): Promise<void> {
  const api = await connect(context);
  const answer = await context.output.busy('Loading destinations', async () => {
    const endpoint = await findEndpoint(api, endpointReference);
    return api.listDestinations(endpoint.id);
  });
  context.output.result(answer, destinationsView);
}

export async function listEvents(
  context: CommandContext,
  endpointReference: string,
  options: EventsListOptions,
): Promise<void> {
  const api = await connect(context);
  const answer = await context.output.busy('Loading events', async () => {
    const endpoint = await findEndpoint(api, endpointReference);
    return api.listEvents(endpoint.id, options);
  });
  context.output.result(answer, eventsView);
}

export async function getEvent(
  context: CommandContext,
  endpointReference: string,
  eventId: string,
): Promise<void> {
  const api = await connect(context);
  const answer = await context.output.busy('Loading the event', async () => {
    const endpoint = await findEndpoint(api, endpointReference);
    return api.getEvent(endpoint.id, eventId);
  });
  context.output.result(answer, eventView);
}

export async function replay(
  context: CommandContext,
  endpointReference: string,
  eventId: string,
): Promise<void> {
  const api = await connect(context);
  const endpoint = await context.output.busy('Finding the endpoint', () =>
    findEndpoint(api, endpointReference),
  );
  const answer = await context.output.busy('Replaying', () => api.replay(endpoint.id, eventId));
  context.output.result(answer, (result, colors) => replayView(endpoint, eventId, result, colors));
}

/** Listens until SIGINT or SIGTERM, which end it cleanly (exit code 0). */
export async function listen(
  context: CommandContext,
  endpointReference: string,
  options: ListenCommandOptions,
): Promise<void> {
  const api = await connect(context);
  const endpoint = await findEndpoint(api, endpointReference);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await new ListenSession(api, context.output, { endpoint, ...options, stop: stop.signal }).run();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
