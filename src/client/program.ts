import { Command, InvalidArgumentError } from 'commander';
import { errorLine } from './cli-error';
import {
  type CommandContext,
  createEndpoint,
  type EventsListOptions,
  getEvent,
  type ListenCommandOptions,
  listen,
  listDestinations,
  listEndpoints,
  listEvents,
  login,
  replay,
} from './commands';
import { Output } from './output';
import { parseSince } from './since';

function wholeNumber(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError('expected a whole number.');
  return Number(value);
}

function since(value: string): Date {
  const start = parseSince(value, new Date());
  if (!start)
    throw new InvalidArgumentError('expected an ISO 8601 time or a duration such as 10m, 2h or 1d.');
  return start;
}

function localUrl(value: string): URL {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new InvalidArgumentError('expected an http:// or https:// URL.');
  return url;
}

/** The `hooktrail` command line; every action gets the output its `--json` asks for. */
export function buildProgram(env: NodeJS.ProcessEnv): Command {
  const program = new Command('hooktrail')
    .description(
      'Hooktrail from the command line: endpoints, events, replays, and listen to forward events locally',
    )
    .option('--json', "print JSON (the API's answers) for scripts")
    // commander's own errors (a missing argument, an unknown option) read as the CLI's others do.
    .configureOutput({ outputError: (text, write) => write(errorLine(text.replace(/^error: /, ''))) });
  const context = (command: Command): CommandContext => ({
    env,
    output: new Output(Boolean(command.optsWithGlobals().json)),
  });

  program
    .command('login')
    .description(`check an API key and keep it, with the API's URL, in the config file`)
    .requiredOption('--api-key <key>', 'an API key (htk_...)')
    .option('--url <url>', 'the API (default: HOOKTRAIL_URL, else http://localhost:3000)')
    .action((options: { apiKey: string; url?: string }, command: Command) =>
      login(context(command), options),
    );

  const endpoints = program.command('endpoints').description('your endpoints');
  endpoints
    .command('list')
    .description('list your endpoints')
    .action((_options: unknown, command: Command) => listEndpoints(context(command)));
  endpoints
    .command('create <name>')
    .description('create an endpoint and print its capture URL')
    .action((name: string, _options: unknown, command: Command) => createEndpoint(context(command), name));

  program
    .command('destinations')
    .description("an endpoint's destinations")
    .command('list <endpoint>')
    .description(
      'list the destinations of an endpoint (id or name); a signing secret only to a key that may change it',
    )
    .action((endpoint: string, _options: unknown, command: Command) =>
      listDestinations(context(command), endpoint),
    );

  const events = program.command('events').description("an endpoint's captured events");
  events
    .command('list <endpoint>')
    .description('list the events of an endpoint (id or name), newest first')
    .option('--status <status>', 'received, delivered, failed or dead_letter')
    .option('--q <text>', 'only events whose body contains this text')
    .option('--limit <n>', 'at most this many events (1 to 100, default 50)', wholeNumber)
    .option('--page <n>', 'which page of that many (default 1)', wholeNumber)
    .action((endpoint: string, options: EventsListOptions, command: Command) =>
      listEvents(context(command), endpoint, options),
    );
  events
    .command('get <endpoint> <event>')
    .description('show one event with its headers, body and deliveries')
    .action((endpoint: string, event: string, _options: unknown, command: Command) =>
      getEvent(context(command), endpoint, event),
    );

  program
    .command('replay <endpoint> <event>')
    .description("send an event again to the endpoint's active destinations whose filter matches it")
    .action((endpoint: string, event: string, _options: unknown, command: Command) =>
      replay(context(command), endpoint, event),
    );

  program
    .command('listen <endpoint>')
    .description("forward the endpoint's new events to a local URL as the original requests, until Ctrl-C")
    .requiredOption('--forward-to <url>', 'where to send them, e.g. http://localhost:4000/webhooks', localUrl)
    .option(
      '--since <when>',
      'first forward the events received since then (ISO 8601 time, or 10m, 2h, 1d)',
      since,
    )
    .action((endpoint: string, options: ListenCommandOptions, command: Command) =>
      listen(context(command), endpoint, options),
    );

  return program;
}
