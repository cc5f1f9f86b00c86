import { readFileSync } from 'node:fs';
import type { Environment } from '../../../src/config/environment';
import { spawnService, type ServiceProcess } from '../../support/service-process';

/** The resident set size of a process, from /proc/<pid>/status (VmRSS), in bytes. */
export function residentBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'));
  if (!line) throw new Error(`no VmRSS for process ${pid}`);
  return Number(line.replace(/\D+/g, '')) * 1024;
}

export const mebibytes = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** Samples a process's RSS every `intervalMs` until stopped; keeps the peak. */
export class RssSampler {
  peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    intervalMs = 100,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return this.peak;
  }

  private sample(): void {
    try {
      this.peak = Math.max(this.peak, residentBytes(this.pid));
    } catch {
      // the process is gone: the peak stays what it was
    }
  }
}

/** A worker process (APP_ROLE=worker) on the same database and Redis prefix as `env`. */
export function spawnWorker(
  env: Environment,
  overrides: Record<string, string> = {},
): Promise<ServiceProcess> {
  return spawnService({
    APP_ROLE: 'worker',
    DATABASE_URL: env.DATABASE_URL,
    REDIS_URL: env.REDIS_URL,
    REDIS_PREFIX: env.REDIS_PREFIX,
    DELIVERY_TIMEOUT_MS: String(env.DELIVERY_TIMEOUT_MS),
    DELIVERY_RETRY_DELAYS_MS: env.DELIVERY_RETRY_DELAYS_MS.join(','),
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'warn',
    ...overrides,
  });
}
