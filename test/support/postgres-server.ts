import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from './service-process';

const run = promisify(execFile);
const BIN = process.env.TEST_POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';
/** initdb and pg_ctl refuse to run as root: they run as this user then. */
const CLUSTER_USER = 'postgres';

/**
 * A throwaway PostgreSQL cluster (`initdb` in a temporary directory, on a spare port, trust
 * authentication) that a test may stop and start again. Never the machine's main cluster.
 */
export class ThrowawayPostgres {
  private constructor(
    readonly port: number,
    private readonly directory: string,
  ) {}

  static async start(): Promise<ThrowawayPostgres> {
    const directory = await mkdtemp(join(tmpdir(), 'hooktrail-pg-'));
    const cluster = new ThrowawayPostgres(await freePort(), directory);
    try {
      if (userInfo().uid === 0) {
        const { stdout } = await run('id', ['-u', CLUSTER_USER]);
        const { stdout: gid } = await run('id', ['-g', CLUSTER_USER]);
        await chown(directory, Number(stdout), Number(gid));
      }
      await cluster.asClusterUser('initdb', [
        '-D',
        cluster.dataDirectory,
        '-U',
        'postgres',
        '-A',
        'trust',
        '--no-sync',
      ]);
      await cluster.startServer();
      return cluster;
    } catch (error) {
      await rm(directory, { recursive: true, force: true });
      throw error;
    }
  }

  /** The URL of database `name` on this cluster (created by the service at start when missing). */
  databaseUrl(name: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${name}`;
  }

  /** Starts the server and waits until it accepts connections. */
  async startServer(): Promise<void> {
    await this.asClusterUser('pg_ctl', [
      'start',
      '-D',
      this.dataDirectory,
      '-w',
      '-l',
      join(this.directory, 'server.log'),
      '-o',
      `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.directory}`,
    ]);
    const client = new Client({ connectionString: this.databaseUrl('postgres') });
    await client.connect();
    await client.end();
  }

  /** Stops the server: `immediate` is a crash (no checkpoint, recovery from WAL at the next start). */
  async stopServer(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.asClusterUser('pg_ctl', ['stop', '-D', this.dataDirectory, '-w', '-m', mode]);
  }

  /** Stops the server when it runs and deletes the cluster. */
  async destroy(): Promise<void> {
    await this.stopServer('immediate').catch(() => undefined);
    await rm(this.directory, { recursive: true, force: true });
  }

  private get dataDirectory(): string {
    return join(this.directory, 'data');
  }

  private async asClusterUser(program: string, args: string[]): Promise<void> {
    const path = join(BIN, program);
    if (userInfo().uid === 0) await run('runuser', ['-u', CLUSTER_USER, '--', path, ...args]);
    else await run(path, args);
  }
}
