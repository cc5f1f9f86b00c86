import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';

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

/** Starts `src/main.ts` in a child process (ts-node, transpile only) with the given environment. */
export async function spawnService(
  env: Record<string, string>,
  options: { waitForHealth?: boolean } = {},
): Promise<ServiceProcess> {
  const port = Number(env.PORT ?? (await freePort()));
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
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
  if (options.waitForHealth ?? true) await waitForHealth(service);
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

export async function stopService(
  service: ServiceProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<number | string> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill(signal);
  return service.exited;
}
