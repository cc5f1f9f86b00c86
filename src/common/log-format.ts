import type { LoggerOptions } from 'pino';
import { isMainThread, workerData } from 'node:worker_threads';

/** What Nest logs while it starts (a line per module and route): kept at debug, so a start says one thing. */
const NEST_STARTUP_CONTEXTS = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
]);
const INFO = 30;

/** Whether this thread writes to a terminal; a worker thread is told its process's answer (see DeliveryThread). */
export function writesToTerminal(): boolean {
  if (isMainThread) return process.stdout.isTTY === true;
  return (workerData as { stdoutIsTTY?: boolean } | null)?.stdoutIsTTY === true;
}

/**
 * Human-readable lines (pino-pretty) when a developer runs the service in a terminal; JSON lines, one per
 * record, everywhere else (production, pipes, files, log collectors).
 */
export function logFormat(nodeEnv: string): Pick<LoggerOptions, 'transport' | 'hooks'> {
  const pretty = nodeEnv !== 'production' && writesToTerminal();
  return {
    transport: pretty
      ? {
          target: 'pino-pretty',
          options: {
            translateTime: 'SYS:HH:MM:ss',
            ignore: 'pid,hostname,context',
            messageFormat: '{if context}[{context}] {end}{msg}',
          },
        }
      : undefined,
    hooks: {
      logMethod(args, method, level) {
        const context = (args[0] as { context?: unknown } | undefined)?.context;
        if (level === INFO && typeof context === 'string' && NEST_STARTUP_CONTEXTS.has(context))
          return this.debug(...(args as [object, string]));
        return method.apply(this, args);
      },
    },
  };
}
