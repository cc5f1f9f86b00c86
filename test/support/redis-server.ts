import { type ChildProcess, spawn } from 'node:child_process';
import Redis from 'ioredis';
import { freePort } from './service-process';

/** A throwaway `redis-server` on a spare port, which a test may stop and start again. */
export class ThrowawayRedis {
  private child?: ChildProcess;

  private constructor(readonly port: number) {}

  static async start(): Promise<ThrowawayRedis> {
    const redis = new ThrowawayRedis(await freePort());
    await redis.startServer();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async startServer(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const client = new Redis({
        port: this.port,
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.ping();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      } finally {
        // A client whose connection was refused has ended already; disconnecting it would arm ioredis's 2-s
        // timer for a socket close that never comes, and keep the test's process alive.
        if (client.status !== 'end') client.disconnect();
      }
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
