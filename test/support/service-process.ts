import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type Environment, loadEnvironment } from '../../src/config/environment';
import { isolatedEnvironment, removeIsolated } from './test-app';

const ROOT = join(__dirname, '..', '..');

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  output: () => string;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
}

/**
 * Starts the service's production build (`dist/src/main.js`, made fresh by `npm run test:e2e` through
 * scripts/build-if-needed.js) in a child process with the given environment, through `bin/hooktrail-server`
 * as `npm start` and the Docker image start it (it execs node: the child's pid is the service's). The build
 * starts in a third of the CPU time that compiling the sources on the fly takes, which matters to tests that
 * start many processes.
 */
export async function spawnService(
  env: Record<string, string>,
  options: { waitForHealth?: boolean } = {},
): Promise<ServiceProcess> {
  const port = Number(env.PORT ?? (await freePort()));
  const child = spawn('sh', ['bin/hooktrail-server'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS,
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const service = { child, port, output: () => output, exited };
  if (options.waitForHealth ?? true) {
    try {
      await waitForHealth(service);
    } catch (error) {
      // A service that did not come up is not left running for the next test.
      await stopService(service, 'SIGKILL');
      throw error;
    }
  }
  return service;
}

export async function waitForHealth(service: ServiceProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) throw new Error(`service exited early:\n${service.output()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${service.port}/health`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`service did not answer /health in ${timeoutMs} ms:\n${service.output()}`);
}

/** Sends `signal` and waits for the exit; a process still there after `graceMs` is killed. */
export async function stopService(
  service: ServiceProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 20_000,
): Promise<number | string> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return service.exited;
  service.child.kill(signal);
  const timer = setTimeout(() => service.child.kill('SIGKILL'), graceMs);
  try {
    return await service.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** The service under test in a process of its own, with its own database and Redis prefix. */
export interface ServiceUnderTest {
  process: ServiceProcess;
  env: Environment;
  /** http://127.0.0.1:<port> */
  url: string;
  /** SIGTERM (a clean shutdown), then drops its database and Redis keys. */
  close(): Promise<void>;
}

/**
 * Starts the whole service (APP_ROLE=all unless overridden) as a child process on an isolated database and
 * Redis prefix: on an event loop of its own, as in production, so that neither the test's HTTPS
 * destinations nor its bookkeeping take the CPU budget of the process under test.
 */
export async function startServiceProcess(overrides: Record<string, string> = {}): Promise<ServiceUnderTest> {
  const variables = isolatedEnvironment({ LOG_LEVEL: 'warn', ...overrides });
  const env = loadEnvironment(variables);
  let service: ServiceProcess;
  try {
    service = await spawnService(variables);
  } catch (error) {
    await removeIsolated(env);
    throw error;
  }
  return {
    process: service,
    env,
    url: `http://127.0.0.1:${service.port}`,
    async close() {
      await stopService(service);
      await removeIsolated(env);
    },
  };
}
