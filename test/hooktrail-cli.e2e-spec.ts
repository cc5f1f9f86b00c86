import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import {
  type AddressInfo,
  connect,
  createServer as createTcpServer,
  type Server as TcpServer,
  type Socket,
} from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import Stripe from 'stripe';
import type { components } from '../src/generated/openapi';
import { api, createApiKey, registerUser, type RegisteredUser } from './support/api-client';
import { HttpsDestination } from './support/https-destination';
import { send } from './support/raw-http';
import { freePort, spawnService, stopService, type ServiceProcess } from './support/service-process';
import { type IsolatedEnvironment, isolatedEnvironment, removeIsolated } from './support/test-app';

type Endpoint = components['schemas']['EndpointDto'];
type CapturedEvent = components['schemas']['EventWithDeliveriesDto'];

const ROOT = join(__dirname, '..');
const WAIT_MS = 20_000;
/** Long enough for a service restart plus the CLI's longest backoff (10 s). */
const RECONNECT_WAIT_MS = 40_000;

/** Every server, process and directory the tests open, closed in reverse order at the end. */
const closers: Array<() => Promise<unknown>> = [];

/** Callbacks run on every change of what they watch (requests received, output printed). */
type Watchers = Set<() => void>;

/** Resolves with the first value `probe` returns, checked now and on every change, or rejects after `timeoutMs`. */
function waitUntil<T>(
  watchers: Watchers,
  probe: () => T | undefined,
  timeoutMs: number,
  explain: () => string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const value = probe();
      if (value === undefined) return;
      clearTimeout(timer);
      watchers.delete(check);
      resolve(value);
    };
    const timer = setTimeout(() => {
      watchers.delete(check);
      reject(new Error(`timed out after ${timeoutMs} ms: ${explain()}`));
    }, timeoutMs);
    watchers.add(check);
    check();
  });
}

/** The service in a child process that can be stopped and started again on its port, database and Redis prefix. */
class RestartableService {
  private process?: ServiceProcess;

  private constructor(private readonly env: IsolatedEnvironment) {}

  static async start(): Promise<RestartableService> {
    const service = new RestartableService(
      isolatedEnvironment({ LOG_LEVEL: 'warn', PORT: String(await freePort()) }),
    );
    await service.up();
    return service;
  }

  get port(): number {
    return Number(this.env.PORT);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get databaseUrl(): string {
    return this.env.DATABASE_URL;
  }

  async up(): Promise<void> {
    this.process = await spawnService(this.env);
  }

  /** SIGTERM: a clean shutdown, which ends the open event streams. */
  async down(): Promise<void> {
    if (this.process) await stopService(this.process);
  }

  async close(): Promise<void> {
    await this.down();
    await removeIsolated(this.env);
  }
}

interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The developer's local server that `listen` forwards to. */
class LocalReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly arrivals: Watchers = new Set();
  private held?: Promise<void>;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<LocalReceiver> {
    const receiver: LocalReceiver = new LocalReceiver(
      createHttpServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const { method = '', url = '', headers } = request;
          receiver.requests.push({ method, url, headers, body: Buffer.concat(chunks) });
          receiver.arrivals.forEach((arrived) => arrived());
          void Promise.resolve(receiver.held).then(() => response.writeHead(202).end('accepted'));
        });
      }),
    );
    receiver.server.listen(0, '127.0.0.1');
    await once(receiver.server, 'listening');
    closers.push(() => receiver.close());
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answers nothing until the returned function is called. */
  hold(): () => void {
    let release!: () => void;
    this.held = new Promise<void>((resolve) => (release = resolve));
    return release;
  }

  waitFor(count: number, timeoutMs = WAIT_MS): Promise<ReceivedRequest[]> {
    return waitUntil(
      this.arrivals,
      () => (this.requests.length >= count ? this.requests : undefined),
      timeoutMs,
      () => `${count} requests expected, ${this.requests.length} received`,
    );
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}

/** A TCP relay between the CLI and the service, to cut the network while the service stays up. */
class TcpRelay {
  private readonly sockets = new Set<Socket>();
  private cut = false;

  private constructor(
    private readonly server: TcpServer,
    private readonly target: number,
  ) {}

  static async start(targetPort: number): Promise<TcpRelay> {
    const relay: TcpRelay = new TcpRelay(
      createTcpServer((client) => relay.connect(client)),
      targetPort,
    );
    relay.server.listen(0, '127.0.0.1');
    await once(relay.server, 'listening');
    closers.push(() => relay.close());
    return relay;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Breaks every open connection and refuses new ones until `restore()`. */
  drop(): void {
    this.cut = true;
    this.sockets.forEach((socket) => socket.destroy());
  }

  restore(): void {
    this.cut = false;
  }

  async close(): Promise<void> {
    this.drop();
    this.server.close();
    await once(this.server, 'close');
  }

  private connect(client: Socket): void {
    if (this.cut) return void client.destroy();
    const upstream = connect(this.target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  }
}

type CliEnvironment = Record<string, string | undefined>;

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/hooktrail.js ...` as a child process, with only the environment the test gives it. */
class CliProcess {
  private stdout = '';
  private stderr = '';
  private readonly changes: Watchers = new Set();
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => this.append(() => (this.stdout += chunk.toString())));
    child.stderr?.on('data', (chunk: Buffer) => this.append(() => (this.stderr += chunk.toString())));
    this.exited = new Promise((resolve) => child.once('close', (code) => this.append(() => resolve(code))));
  }

  static start(args: string[], env: CliEnvironment): CliProcess {
    const variables = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));
    const cli = new CliProcess(
      spawn(process.execPath, ['bin/hooktrail.js', ...args], { cwd: ROOT, env: variables, stdio: 'pipe' }),
    );
    closers.push(() => cli.stop('SIGKILL'));
    return cli;
  }

  get lines(): string[] {
    return this.stdout.split('\n').filter(Boolean);
  }

  /** With --json, listen prints one JSON object a line. */
  get records(): Array<Record<string, unknown>> {
    return this.lines.map((line) => JSON.parse(line));
  }

  async result(): Promise<CliResult> {
    const code = await this.exited;
    return { code, stdout: this.stdout, stderr: this.stderr };
  }

  /** Waits for the `occurrence`-th line of stdout that matches. */
  waitForLine(pattern: RegExp, occurrence = 1, timeoutMs = WAIT_MS): Promise<string> {
    const found = () => this.lines.filter((line) => pattern.test(line))[occurrence - 1];
    return this.waitFor(found, timeoutMs, `line ${occurrence} matching ${pattern}`);
  }

  /** Waits for the `occurrence`-th JSON record of this type (listen --json). */
  waitForRecord(type: string, occurrence = 1, timeoutMs = WAIT_MS): Promise<Record<string, unknown>> {
    const found = () => this.records.filter((record) => record.type === type)[occurrence - 1];
    return this.waitFor(found, timeoutMs, `${type} record ${occurrence}`);
  }

  /** Stops it as a user would (Ctrl-C) and resolves with the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGINT'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }

  private waitFor<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return waitUntil(
      this.changes,
      probe,
      timeoutMs,
      () => `${what} not seen; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`,
    );
  }

  private append(change: () => void): void {
    change();
    this.changes.forEach((check) => check());
  }
}

describe('hooktrail (the command-line client)', () => {
  let service: RestartableService;
  let user: RegisteredUser;
  let apiKey: string;
  let home: string;

  /** The environment of a user who has set HOOKTRAIL_URL and HOOKTRAIL_API_KEY, with `changes`. */
  const environment = (changes: CliEnvironment = {}): CliEnvironment => ({
    PATH: process.env.PATH,
    HOME: home,
    HOOKTRAIL_URL: service.url,
    HOOKTRAIL_API_KEY: apiKey,
    ...changes,
  });
  const hooktrail = (args: string[], changes: CliEnvironment = {}) =>
    CliProcess.start(args, environment(changes)).result();
  const listen = (args: string[], changes: CliEnvironment = {}) =>
    CliProcess.start(['listen', ...args], environment(changes));
  const createEndpoint = async (name: string): Promise<Endpoint> => {
    const created = await hooktrail(['endpoints', 'create', name, '--json']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(created.stdout).endpoint;
  };
  /** Sends a webhook to the endpoint's capture URL, byte for byte, and returns the event id. */
  const capture = async (
    endpoint: Endpoint,
    options: {
      method?: string;
      query?: string;
      headers?: Record<string, string>;
      body?: Buffer | string;
    } = {},
  ): Promise<string> => {
    const path = `/in/${endpoint.public_token}${options.query ? `?${options.query}` : ''}`;
    const answer = await send(service.url, options.method ?? 'POST', path, options);
    if (answer.status !== 200) throw new Error(`capture: ${answer.status} ${answer.text}`);
    return answer.json.id;
  };
  /** The line the CLI prints for a refused key: the API's own status and message. */
  const refusal = async (key: string): Promise<string> => {
    const answer = await api(service.url, 'GET', '/api/endpoints', { token: key });
    expect(answer.status).toBe(401);
    return `hooktrail: 401 ${answer.body.message}\n`;
  };
  const apiGet = async <T>(path: string): Promise<T> => {
    const answer = await api<T>(service.url, 'GET', path, { token: apiKey });
    expect(answer.status).toBe(200);
    return answer.body;
  };

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'hooktrail-cli-home-'));
    closers.push(() => rm(home, { recursive: true, force: true }));
    service = await RestartableService.start();
    closers.push(() => service.close());
    user = await registerUser(service.url);
    ({ key: apiKey } = await createApiKey(service.url, user, { name: 'hooktrail CLI tests' }));
  }, 60_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  }, 60_000);

  describe('endpoints', () => {
    it('creates endpoints and lists them, as lines for people and as the API answers with --json', async () => {
      const created = await hooktrail(['endpoints', 'create', 'Stripe']);
      expect(created).toMatchObject({ code: 0, stderr: '' });
      const [, id] = /^Created endpoint Stripe \((\S+)\)\n/.exec(created.stdout) ?? [];
      expect(created.stdout).toMatch(new RegExp(`^Capture URL: http://\\S+/in/\\S+$`, 'm'));
      const github = await createEndpoint('GitHub');

      const human = await hooktrail(['endpoints', 'list']);
      expect(human).toMatchObject({ code: 0, stderr: '' });
      const lines = human.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^NAME\s+ID\s+ACTIVE\s+CAPTURE URL$/);
      expect(lines.slice(1)).toEqual([
        expect.stringMatching(new RegExp(`^GitHub\\s+${github.id}\\s+yes\\s+${github.capture_url}$`)),
        expect.stringMatching(new RegExp(`^Stripe\\s+${id}\\s+yes\\s+http://\\S+/in/\\S+$`)),
      ]);

      const json = await hooktrail(['endpoints', 'list', '--json']);
      expect(json).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(json.stdout)).toEqual(await apiGet('/api/endpoints'));
    });
  });

  describe('destinations', () => {
    it('lists them with the secret for a write key, and says it is set but hidden for a read-only key', async () => {
      const endpoint = await createEndpoint('Signed');
      const secret = 'whsec_cli_destinations_secret';
      for (const body of [
        { url: 'https://signed.example.com/hooks', secret },
        { url: 'https://unsigned.example.com/hooks' },
      ]) {
        const added = await api(service.url, 'POST', `/api/endpoints/${endpoint.id}/destinations`, {
          token: apiKey,
          body,
        });
        expect(added.status).toBe(201);
      }
      const [signed, unsigned] = (
        await apiGet<{ destinations: { id: string }[] }>(`/api/endpoints/${endpoint.id}/destinations`)
      ).destinations;
      const readKey = (await createApiKey(service.url, user, { name: 'read-only', scope: 'read' })).key;

      const writer = await hooktrail(['destinations', 'list', 'Signed']);
      expect(writer).toMatchObject({ code: 0, stderr: '' });
      const reader = await hooktrail(['destinations', 'list', endpoint.id], { HOOKTRAIL_API_KEY: readKey });
      expect(reader).toMatchObject({ code: 0, stderr: '' });
      const rows = (stdout: string) => stdout.trimEnd().split('\n');
      expect(rows(writer.stdout)).toEqual([
        expect.stringMatching(/^URL\s+ID\s+ACTIVE\s+SECRET$/),
        expect.stringMatching(new RegExp(`^https://signed\\S+\\s+${signed.id}\\s+yes\\s+${secret}$`)),
        expect.stringMatching(new RegExp(`^https://unsigned\\S+\\s+${unsigned.id}\\s+yes\\s+none$`)),
      ]);
      expect(rows(reader.stdout).slice(1)).toEqual([
        expect.stringMatching(/\s+yes\s+\(set, hidden for your role\)$/),
        expect.stringMatching(/\s+yes\s+none$/),
      ]);
      expect(reader.stdout).not.toContain(secret);

      const json = await hooktrail(['destinations', 'list', 'Signed', '--json'], {
        HOOKTRAIL_API_KEY: readKey,
      });
      expect(JSON.parse(json.stdout).destinations).toEqual([
        expect.objectContaining({ id: signed.id, secret: null, secret_set: true }),
        expect.objectContaining({ id: unsigned.id, secret: null, secret_set: false }),
      ]);
    });
  });

  describe('events and replay', () => {
    let endpoint: Endpoint;
    const ids: Record<'paid' | 'failed' | 'binary', string> = { paid: '', failed: '', binary: '' };
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x61]);

    beforeAll(async () => {
      endpoint = await createEndpoint('Billing');
      ids.paid = await capture(endpoint, { body: '{"type":"invoice.paid"}', query: 'attempt=1' });
      ids.failed = await capture(endpoint, { body: '{"type":"charge.failed"}' });
      ids.binary = await capture(endpoint, { method: 'PUT', body: binary });
    });

    it('lists events newest first by endpoint name, and with --json as the API answers', async () => {
      const human = await hooktrail(['events', 'list', 'Billing']);
      expect(human).toMatchObject({ code: 0, stderr: '' });
      const row = (method: string, id: string, body: string) =>
        expect.stringMatching(
          new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  ${id}  ${method}\\s+received  ${body}$`),
        );
      expect(human.stdout.trimEnd().split('\n')).toEqual([
        expect.stringMatching(/^RECEIVED\s+ID\s+METHOD\s+STATUS\s+BODY$/),
        row('PUT', ids.binary, '\\(binary, 5 bytes\\)'),
        row('POST', ids.failed, '\\{"type":"charge.failed"\\}'),
        row('POST', ids.paid, '\\{"type":"invoice.paid"\\}'),
        'Page 1 of 1 (3 events)',
      ]);

      const json = await hooktrail(['events', 'list', endpoint.id, '--q', 'invoice', '--json']);
      expect(json).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(json.stdout)).toEqual(await apiGet(`/api/endpoints/${endpoint.id}/events?q=invoice`));
    });

    it('passes --status, --limit and --page to the API', async () => {
      const limited = JSON.parse(
        (await hooktrail(['events', 'list', 'Billing', '--limit', '1', '--json'])).stdout,
      );
      expect(limited.events.map((event: CapturedEvent) => event.id)).toEqual([ids.binary]);
      expect(limited.pagination).toMatchObject({ limit: 1, pages: 3, total: 3 });
      const second = await hooktrail(['events', 'list', 'Billing', '--limit', '1', '--page', '2']);
      expect(second).toMatchObject({ code: 0, stderr: '' });
      expect(second.stdout).toContain(`  ${ids.failed}  POST`);
      expect(second.stdout).toContain('Page 2 of 3 (3 events)');
      expect(await hooktrail(['events', 'list', 'Billing', '--page', '0'])).toMatchObject({
        code: 1,
        stdout: '',
        stderr: expect.stringContaining('page'),
      });

      const delivered = await hooktrail(['events', 'list', 'Billing', '--status', 'delivered']);
      expect(delivered).toMatchObject({ code: 0, stdout: 'No events.\n', stderr: '' });
    });

    it('stops quietly, exit code 0, when its reader has gone (a pipe into head)', async () => {
      const variables = Object.fromEntries(
        Object.entries(environment()).filter(([, value]) => value !== undefined),
      );
      const child = spawn(process.execPath, ['bin/hooktrail.js', 'events', 'list', 'Billing'], {
        cwd: ROOT,
        env: variables,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.destroy(); // the reader closes its end before the CLI has written anything
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = await once(child, 'close');
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    });

    it('shows one event, a binary body as base64, and with --json as the API answers', async () => {
      const human = await hooktrail(['events', 'get', 'Billing', ids.binary]);
      expect(human).toMatchObject({ code: 0, stderr: '' });
      expect(human.stdout).toContain(`Event        ${ids.binary}\n`);
      expect(human.stdout).toContain('Request      PUT\n');
      expect(human.stdout).toContain(`Body (5 bytes, not UTF-8: base64)\n${binary.toString('base64')}\n`);

      const json = await hooktrail(['events', 'get', endpoint.id, ids.paid, '--json']);
      expect(json).toMatchObject({ code: 0, stderr: '' });
      const answer = await apiGet<{ event: CapturedEvent }>(
        `/api/endpoints/${endpoint.id}/events/${ids.paid}`,
      );
      expect(JSON.parse(json.stdout)).toEqual(answer);
      expect(answer.event.query).toBe('attempt=1');
    });

    it('replays an event to the active destinations', async () => {
      const destination = await HttpsDestination.start();
      closers.push(() => destination.close());
      const added = await api(service.url, 'POST', `/api/endpoints/${endpoint.id}/destinations`, {
        token: apiKey,
        body: { url: destination.url },
      });
      expect(added.status).toBe(201);

      const human = await hooktrail(['replay', 'Billing', ids.paid]);
      expect(human).toMatchObject({ code: 0, stderr: '' });
      expect(human.stdout).toMatch(
        new RegExp(`^Replayed ${ids.paid} to the active destinations of Billing \\(dispatch \\S+\\)\n$`),
      );
      const json = await hooktrail(['replay', endpoint.id, ids.paid, '--json']);
      expect(json).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(json.stdout)).toEqual({ ok: true, jobId: expect.any(String) });

      const delivered = await destination.waitForRequests(2, WAIT_MS);
      expect(delivered.map((request) => request.body.toString())).toEqual([
        '{"type":"invoice.paid"}',
        '{"type":"invoice.paid"}',
      ]);
    });
  });

  describe('errors: one line on stderr, exit code 1', () => {
    const failure = (stderr: string) => ({ code: 1, stdout: '', stderr: `hooktrail: ${stderr}\n` });

    it('a key the API refuses, with its message', async () => {
      expect(await hooktrail(['endpoints', 'list'], { HOOKTRAIL_API_KEY: 'htk_not_a_key' })).toEqual({
        code: 1,
        stdout: '',
        stderr: await refusal('htk_not_a_key'),
      });
    });

    it('a read-only key asked to write, and a revoked key', async () => {
      const owner = await registerUser(service.url);
      const created = await createApiKey(service.url, owner, { name: 'read only', scope: 'read' });
      const readKey = { HOOKTRAIL_API_KEY: created.key };
      expect(await hooktrail(['endpoints', 'list'], readKey)).toMatchObject({ code: 0, stderr: '' });
      expect(await hooktrail(['endpoints', 'create', 'Nope'], readKey)).toEqual(
        failure('403 this API key is read-only: it may only make GET requests'),
      );
      await api(service.url, 'DELETE', `/api/api-keys/${created.api_key.id}`, {
        token: owner.accessToken,
      });
      expect(await hooktrail(['endpoints', 'list'], readKey)).toEqual(
        failure('401 API key is unknown, expired or revoked'),
      );
    });

    it('no key at all', async () => {
      expect(await hooktrail(['endpoints', 'list'], { HOOKTRAIL_API_KEY: undefined })).toEqual(
        failure('no API key: set HOOKTRAIL_API_KEY or run hooktrail login --api-key <key>'),
      );
    });

    it('an endpoint that is not found, or a name that several endpoints share', async () => {
      expect(await hooktrail(['events', 'list', 'Nope'])).toEqual(
        failure('endpoint not found: Nope (see hooktrail endpoints list)'),
      );
      const [first, second] = [await createEndpoint('Twin'), await createEndpoint('Twin')];
      expect(await hooktrail(['events', 'list', 'Twin'])).toEqual(
        failure(`2 endpoints are named "Twin" (${second.id}, ${first.id}): use an id`),
      );
    });

    it("an event that is not found, or a replay the API refuses, with the API's message", async () => {
      const endpoint = await createEndpoint('Quiet');
      const eventId = await capture(endpoint);
      expect(await hooktrail(['events', 'get', 'Quiet', 'not-an-event'])).toEqual(
        failure('404 event not found'),
      );
      expect(await hooktrail(['replay', 'Quiet', eventId])).toEqual(
        failure('409 the endpoint has no active destination: add or activate one, then replay'),
      );
    });

    it('a value the command line cannot take', async () => {
      expect(
        await hooktrail(['listen', 'Quiet', '--forward-to', 'http://127.0.0.1:1', '--since', '5x']),
      ).toEqual(
        failure(
          "option '--since <when>' argument '5x' is invalid. expected an ISO 8601 time or a duration such as 10m, 2h or 1d.",
        ),
      );
    });
  });

  describe('login', () => {
    const loginEnvironment = (changes: CliEnvironment) => ({
      HOOKTRAIL_URL: undefined,
      HOOKTRAIL_API_KEY: undefined,
      ...changes,
    });

    it('checks the key, keeps it in $XDG_CONFIG_HOME/hooktrail/config.json (0600), and the environment overrides it', async () => {
      const xdg = join(home, 'xdg');
      const path = join(xdg, 'hooktrail', 'config.json');
      const login = (key: string) =>
        hooktrail(
          ['login', '--url', service.url, '--api-key', key],
          loginEnvironment({ XDG_CONFIG_HOME: xdg }),
        );

      expect(await login('htk_not_a_key')).toEqual({
        code: 1,
        stdout: '',
        stderr: await refusal('htk_not_a_key'),
      });
      await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' });

      expect(await login(apiKey)).toEqual({
        code: 0,
        stdout: `Logged in to ${service.url}; the key is kept in ${path}\n`,
        stderr: '',
      });
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
        url: service.url,
        api_key: apiKey,
      });

      const listed = await hooktrail(
        ['endpoints', 'list', '--json'],
        loginEnvironment({ XDG_CONFIG_HOME: xdg }),
      );
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      const overridden = loginEnvironment({ XDG_CONFIG_HOME: xdg, HOOKTRAIL_API_KEY: 'htk_not_a_key' });
      expect(await hooktrail(['endpoints', 'list'], overridden)).toMatchObject({
        code: 1,
        stderr: await refusal('htk_not_a_key'),
      });
    });

    it('keeps it in ~/.config/hooktrail/config.json without XDG_CONFIG_HOME, and answers JSON with --json', async () => {
      const otherHome = await mkdtemp(join(tmpdir(), 'hooktrail-cli-home-'));
      closers.push(() => rm(otherHome, { recursive: true, force: true }));
      const path = join(otherHome, '.config', 'hooktrail', 'config.json');

      const result = await hooktrail(
        ['login', '--url', `${service.url}/`, '--api-key', apiKey, '--json'],
        loginEnvironment({ HOME: otherHome }),
      );

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(result.stdout)).toEqual({ url: service.url, config_path: path });
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    });
  });

  describe('listen', () => {
    it('forwards each new event as the original request: method, query, headers without hop-by-hop ones, exact bytes', async () => {
      const endpoint = await createEndpoint('Local');
      const receiver = await LocalReceiver.start();
      const listener = listen(['Local', '--forward-to', `${receiver.url}/hooks?from=cli`]);
      await listener.waitForLine(/^Ready! Forwarding events of Local /);

      const binary = Buffer.from([0x00, 0xff, 0xc3, 0x28, 0x0a, 0x80]);
      const json = await capture(endpoint, {
        query: 'a=1&b=two%20words',
        headers: {
          'content-type': 'application/json',
          'stripe-signature': 't=1,v1=abc',
          connection: 'keep-alive, x-hop',
          'keep-alive': 'timeout=5',
          'x-hop': 'for the next hop only',
          'proxy-authorization': 'Basic eA==',
        },
        body: '{"type":"invoice.paid","amount":42}',
      });
      const bytes = await capture(endpoint, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: binary,
      });
      const bare = await capture(endpoint, { method: 'GET', query: 'ping=1' });

      const [first, second, third] = await receiver.waitFor(3);
      expect(first).toMatchObject({ method: 'POST', url: '/hooks?from=cli&a=1&b=two%20words' });
      expect(first.body.toString()).toBe('{"type":"invoice.paid","amount":42}');
      expect(first.headers).toMatchObject({
        'content-type': 'application/json',
        'stripe-signature': 't=1,v1=abc',
        'content-length': '35',
        host: new URL(receiver.url).host,
      });
      for (const name of ['keep-alive', 'x-hop', 'proxy-authorization'])
        expect(first.headers).not.toHaveProperty(name);
      expect(second).toMatchObject({ method: 'PUT', url: '/hooks?from=cli', body: binary });
      expect(second.headers).toMatchObject({
        'content-type': 'application/octet-stream',
        'content-length': '6',
      });
      expect(third).toMatchObject({ method: 'GET', url: '/hooks?from=cli&ping=1', body: Buffer.alloc(0) });
      expect(third.headers).not.toHaveProperty('content-length');

      for (const [method, id] of [
        ['POST', json],
        ['PUT', bytes],
        ['GET', bare],
      ])
        await listener.waitForLine(
          new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  ${method}\\s+${id}  → 202  \\d+ ms$`),
        );
      expect(await listener.stop()).toBe(0);
      expect(listener.lines).toHaveLength(4);
    });

    it('prints a line for an event the local server did not take, and goes on', async () => {
      const endpoint = await createEndpoint('Closed');
      const port = await freePort();
      const listener = listen(['Closed', '--forward-to', `http://127.0.0.1:${port}/`]);
      await listener.waitForLine(/^Ready!/);

      for (const id of [await capture(endpoint), await capture(endpoint)])
        await listener.waitForLine(
          new RegExp(`  ${id}  → error: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}  \\d+ ms$`),
        );
      expect(await listener.stop('SIGTERM')).toBe(0);
    });

    it('forwards, by the catch-up it makes every 15 s, an event the stream never announced', async () => {
      const endpoint = await createEndpoint('Unannounced');
      const receiver = await LocalReceiver.start();
      const listener = listen(['Unannounced', '--forward-to', receiver.url, '--json']);
      await listener.waitForRecord('ready');
      // Stored as a capture is, but never announced: as when the service could not publish to Redis.
      const db = new Client({ connectionString: service.databaseUrl });
      await db.connect();
      let unannounced: string;
      try {
        const { rows } = await db.query<{ id: string }>(
          `insert into events (id, endpoint_id, status, method, headers, query, body_text, received_at)
           values (gen_random_uuid(), $1, 'received', 'POST', '{"content-type": "text/plain"}', '',
                   'unannounced', now())
           returning id`,
          [endpoint.id],
        );
        unannounced = rows[0].id;
      } finally {
        await db.end();
      }
      const [request] = await receiver.waitFor(1, 30_000);
      expect(request.body.toString()).toBe('unannounced');
      expect(await listener.waitForRecord('forwarded')).toMatchObject({ event_id: unannounced, status: 202 });
      expect(await listener.stop()).toBe(0);
    }, 60_000);

    it('does not forward a request whose signature failed on an endpoint that enforces it, as destinations', async () => {
      const endpoint = await createEndpoint('Enforced');
      const secret = 'whsec_cli_enforced_0123456789';
      const rules = await api(service.url, 'PATCH', `/api/endpoints/${endpoint.id}`, {
        token: apiKey,
        body: { verification: { provider: 'stripe', secret, mode: 'enforce' } },
      });
      expect(rules.status).toBe(200);
      const receiver = await LocalReceiver.start();
      const listener = listen(['Enforced', '--forward-to', receiver.url, '--json']);
      await listener.waitForRecord('ready');
      const signed = (payload: string, key: string) => ({
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: key }),
      });
      const path = `/in/${endpoint.public_token}`;
      const forged = await send(service.url, 'POST', path, {
        body: '{"id":"evt_forged"}',
        headers: signed('{"id":"evt_forged"}', 'whsec_not_the_secret'),
      });
      expect(forged.status).toBe(401);
      const genuine = await capture(endpoint, {
        body: '{"id":"evt_genuine"}',
        headers: signed('{"id":"evt_genuine"}', secret),
      });

      expect(await listener.waitForRecord('skipped')).toMatchObject({ event_id: forged.json.id });
      expect(await listener.waitForRecord('forwarded')).toMatchObject({ event_id: genuine });
      expect(await listener.stop()).toBe(0);
      expect(receiver.requests.map((request) => request.body.toString())).toEqual(['{"id":"evt_genuine"}']);
    });

    it('resumes after a network drop and after a service restart: nothing missed, nothing twice, in order', async () => {
      const endpoint = await createEndpoint('Resume');
      const receiver = await LocalReceiver.start();
      const relay = await TcpRelay.start(service.port);
      const listener = listen(['Resume', '--forward-to', receiver.url, '--json'], {
        HOOKTRAIL_URL: relay.url,
      });
      const record = (type: string, occurrence = 1) =>
        listener.waitForRecord(type, occurrence, RECONNECT_WAIT_MS);
      await record('ready');
      const captured = [await capture(endpoint, { body: 'n=1' })];
      await receiver.waitFor(1);

      // The network drops: these are captured while the CLI cannot reach the service at all.
      relay.drop();
      await record('disconnected');
      captured.push(await capture(endpoint, { body: 'n=2' }), await capture(endpoint, { body: 'n=3' }));
      relay.restore();
      await record('reconnected');
      await receiver.waitFor(3);

      // The service restarts: these are captured as soon as it is back, before or after the CLI reconnects.
      await service.down();
      await record('disconnected', 2);
      await service.up();
      captured.push(await capture(endpoint, { body: 'n=4' }), await capture(endpoint, { body: 'n=5' }));
      await record('reconnected', 2);
      await receiver.waitFor(5, RECONNECT_WAIT_MS);
      captured.push(await capture(endpoint, { body: 'n=6' }));
      await record('forwarded', 6);

      expect(await listener.stop()).toBe(0);
      expect(receiver.requests.map((request) => request.body.toString())).toEqual([
        'n=1',
        'n=2',
        'n=3',
        'n=4',
        'n=5',
        'n=6',
      ]);
      const forwarded = listener.records.filter((entry) => entry.type === 'forwarded');
      expect(forwarded.map((entry) => entry.event_id)).toEqual(captured);
      expect(forwarded.every((entry) => entry.status === 202)).toBe(true);
    }, 120_000);

    it('with --since forwards the events received since then, oldest first, then the live ones, each once, each line with its capture time', async () => {
      const endpoint = await createEndpoint('History');
      await capture(endpoint, { body: 'before' });
      const history: string[] = [];
      for (const body of ['h=1', 'h=2', 'h=3']) history.push(await capture(endpoint, { body }));
      const receivedAt = async (id: string) =>
        (await apiGet<{ event: CapturedEvent }>(`/api/endpoints/${endpoint.id}/events/${id}`)).event
          .received_at;
      const since = await receivedAt(history[0]);
      // Forwarded in a later second than they were captured, so that a line with the forwarding time differs.
      const lastCaptured = Date.parse(await receivedAt(history[2]));
      await new Promise((resolve) => setTimeout(resolve, 1000 - (lastCaptured % 1000) + 50));
      const receiver = await LocalReceiver.start();
      // The local server holds the first answer, so the live events arrive while the history is forwarded.
      const release = receiver.hold();

      const listener = listen(['History', '--forward-to', receiver.url, '--since', since], { TZ: 'UTC' });
      await listener.waitForLine(/^Ready! .*, first those received since /);
      await receiver.waitFor(1);
      await capture(endpoint, { body: 'live=1' });
      await capture(endpoint, { body: 'live=2' });
      release();
      await listener.waitForLine(/→ 202/, 5);

      expect(await listener.stop()).toBe(0);
      expect(receiver.requests.map((request) => request.body.toString())).toEqual([
        'h=1',
        'h=2',
        'h=3',
        'live=1',
        'live=2',
      ]);
      const forwarded = listener.lines.filter((line) => line.includes('→ 202'));
      expect(forwarded).toHaveLength(5);
      for (const id of history) {
        const utc = (await receivedAt(id)).slice(0, 19).replace('T', ' ');
        expect(forwarded).toContainEqual(expect.stringMatching(new RegExp(`^${utc}  POST    ${id}  → 202`)));
      }
    });
  });
});
