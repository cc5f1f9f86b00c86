import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInstance,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
  ValidateIf,
  validateSync,
  ValidationError,
} from 'class-validator';
import { type Plan, PLANS } from '../common/plans';

export const APP_ROLES = ['all', 'api', 'worker'] as const;

/** 32 bytes in base64 (44 characters with its padding), e.g. `openssl rand -base64 32`. */
const ENCRYPTION_KEY_SHAPE = /^[A-Za-z0-9+/]{43}=$/;
const ENCRYPTION_KEY_MESSAGE = 'must be 32 bytes in base64 (openssl rand -base64 32)';
export type AppRole = (typeof APP_ROLES)[number];

const toBoolean = ({ value }: { value: unknown }) => {
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  const text = String(value).toLowerCase();
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  return value;
};
/** `true` is one proxy in front, `false` none; a whole number says how many. */
const toProxyHops = ({ value }: { value: unknown }) => {
  const flag = toBoolean({ value });
  return typeof flag === 'boolean' ? Number(flag) : toInteger({ value });
};
const MAX_PROXY_HOPS = 10;
const TRUST_PROXY_MESSAGE = `must be true (one proxy in front), false, or how many proxies are in front, 0 to ${MAX_PROXY_HOPS}`;
const toInteger = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : /^-?\d+$/.test(String(value)) ? Number(value) : value;
const toDelayList = ({ value }: { value: unknown }) => {
  if (value === undefined || value === '') return undefined;
  if (Array.isArray(value)) return value;
  const parts = String(value)
    .split(',')
    .map((part) => part.trim());
  return parts.every((part) => /^\d+$/.test(part)) && parts.length === 4 ? parts.map(Number) : value;
};

/** The longest any plan keeps events, as for an endpoint's own `retention_days`: ten years. */
const RETENTION_DAYS_LIMIT = 3650;
const RETENTION_DAYS_MESSAGE = `must give each plan (${PLANS.join(', ')}) its days from 1 to ${RETENTION_DAYS_LIMIT}, e.g. free:7,starter:30,pro:90,team:365`;

/**
 * How many days each plan keeps events (RETENTION_DAYS, `plan:days` for every plan, comma-separated).
 * `toString` gives that form back, so that environmentVariables hands the value on to the delivery thread
 * as it was read.
 */
export class PlanRetention {
  constructor(readonly days: Readonly<Record<Plan, number>>) {}

  /** The days named by `text`, or null unless it names every plan once with a whole number in range. */
  static parse(text: string): PlanRetention | null {
    const pairs = text.split(',').map((item) => /^\s*([a-z]+)\s*:\s*(\d+)\s*$/.exec(item));
    if (pairs.some((pair) => pair === null)) return null;
    const days = new Map((pairs as RegExpExecArray[]).map(([, plan, value]) => [plan, Number(value)]));
    const inRange = (value = 0) => value >= 1 && value <= RETENTION_DAYS_LIMIT;
    const valid =
      days.size === pairs.length &&
      days.size === PLANS.length &&
      PLANS.every((plan) => inRange(days.get(plan)));
    return valid ? new PlanRetention(Object.fromEntries(days) as Record<Plan, number>) : null;
  }

  toString(): string {
    return PLANS.map((plan) => `${plan}:${this.days[plan]}`).join(',');
  }
}

const toPlanRetention = ({ value }: { value: unknown }) => {
  if (value === undefined || value === '' || value instanceof PlanRetention) return value;
  return PlanRetention.parse(String(value)) ?? value;
};

/**
 * Every environment variable of the service (names fixed by design.md), validated once at start-up.
 * Defaults are applied here, so the rest of the code reads typed values and never `process.env`.
 */
export class Environment {
  @IsOptional()
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    message: 'must be one of fatal, error, warn, info, debug, trace, silent',
  })
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent' = 'info';

  @Transform(toInteger)
  @IsInt({ message: 'must be a whole number from 0 to 65535' })
  @Min(0, { message: 'must be a whole number from 0 to 65535' })
  @Max(65535, { message: 'must be a whole number from 0 to 65535' })
  PORT = 3000;

  @IsIn(APP_ROLES, { message: `must be one of ${APP_ROLES.join(', ')}` })
  APP_ROLE: AppRole = 'all';

  /**
   * The proxies in front of the service whose `X-Forwarded-For` entries are believed, counted from the
   * service: the client IP is the entry the outermost of them added (`true`: one, the usual load balancer).
   * What a client writes into the header itself, to the left of those, is never taken.
   */
  @Transform(toProxyHops)
  @IsInt({ message: TRUST_PROXY_MESSAGE })
  @Min(0, { message: TRUST_PROXY_MESSAGE })
  @Max(MAX_PROXY_HOPS, { message: TRUST_PROXY_MESSAGE })
  TRUST_PROXY = 0;

  @Matches(/^postgres(ql)?:\/\/.+\/[^/?]+/, {
    message: 'must be a postgres:// URL naming a database, e.g. postgres://postgres@127.0.0.1:5432/hooktrail',
  })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/hooktrail';

  @Matches(/^rediss?:\/\/.+/, { message: 'must be a redis:// URL, e.g. redis://127.0.0.1:6379' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** Prefix of every Redis key (queues, pub/sub channels), so several deployments or test runs share one Redis. */
  @Matches(/^[A-Za-z0-9:_-]+$/, { message: 'may hold only letters, digits, ":", "_" and "-"' })
  REDIS_PREFIX = 'hooktrail';

  @IsOptional()
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    { message: 'must be an http(s) URL' },
  )
  SITE_URL?: string;

  @ValidateIf((env: Environment) => env.NODE_ENV === 'production' || env.JWT_SECRET !== undefined)
  @MinLength(32, { message: 'must be at least 32 characters' })
  @IsString({ message: 'is required when NODE_ENV=production' })
  JWT_SECRET?: string;

  @ValidateIf((env: Environment) => env.NODE_ENV === 'production' || env.ENCRYPTION_KEY !== undefined)
  @Matches(ENCRYPTION_KEY_SHAPE, { message: ENCRYPTION_KEY_MESSAGE })
  @IsString({ message: 'is required when NODE_ENV=production' })
  ENCRYPTION_KEY?: string;

  @IsOptional()
  @Matches(ENCRYPTION_KEY_SHAPE, { message: ENCRYPTION_KEY_MESSAGE })
  ENCRYPTION_KEY_PREVIOUS?: string;

  @IsOptional()
  @Matches(/^smtps?:\/\/.+/, { message: 'must be an smtp:// or smtps:// URL, e.g. smtp://127.0.0.1:1025' })
  SMTP_URL?: string;

  @IsString()
  MAIL_FROM = 'Hooktrail <alerts@localhost>';

  @IsOptional()
  @IsString()
  GEMINI_API_KEY?: string;

  @IsString()
  GEMINI_MODEL = 'gemini-2.5-flash';

  @IsOptional()
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    { message: 'must be an http(s) URL' },
  )
  GEMINI_BASE_URL?: string;

  @Transform(toDelayList)
  @IsInt({
    each: true,
    message: 'must be four comma-separated delays in milliseconds, e.g. 5000,25000,120000,600000',
  })
  DELIVERY_RETRY_DELAYS_MS: number[] = [5000, 25000, 120000, 600000];

  @Transform(toInteger)
  @IsInt({ message: 'must be a whole number of milliseconds from 100 to 120000' })
  @Min(100, { message: 'must be a whole number of milliseconds from 100 to 120000' })
  @Max(120000, { message: 'must be a whole number of milliseconds from 100 to 120000' })
  DELIVERY_TIMEOUT_MS = 10000;

  @Transform(toBoolean)
  @IsBoolean({ message: 'must be true or false' })
  DELIVERY_ALLOW_PRIVATE_NETWORKS = false;

  /** A notification channel's window per kind of notification (design.md, "Notifications: timing"). */
  @Transform(toInteger)
  @IsInt({ message: 'must be a whole number of seconds from 1 to 86400' })
  @Min(1, { message: 'must be a whole number of seconds from 1 to 86400' })
  @Max(86400, { message: 'must be a whole number of seconds from 1 to 86400' })
  NOTIFICATION_WINDOW_S = 120;

  @Transform(toInteger)
  @IsOptional()
  @IsInt({ message: 'must be a positive whole number' })
  @Min(1, { message: 'must be a positive whole number' })
  CAPTURE_RATE_LIMIT_PER_S?: number;

  @Transform(toInteger)
  @IsInt({ message: 'must be a positive whole number' })
  @Min(1, { message: 'must be a positive whole number' })
  AUTH_RATE_LIMIT_PER_MIN = 10;

  @Transform(toInteger)
  @IsInt({ message: 'must be a whole number of bytes from 1 to 104857600' })
  @Min(1, { message: 'must be a whole number of bytes from 1 to 104857600' })
  @Max(104857600, { message: 'must be a whole number of bytes from 1 to 104857600' })
  CAPTURE_MAX_BODY_BYTES = 10485760;

  /**
   * The longest a capture waits for its answer once its body is read: 200 after the commit, or 503 with
   * Retry-After when it could not be stored in that time (extension; see README, "When the box is saturated").
   */
  @Transform(toInteger)
  @IsInt({ message: 'must be a whole number of milliseconds from 200 to 60000' })
  @Min(200, { message: 'must be a whole number of milliseconds from 200 to 60000' })
  @Max(60000, { message: 'must be a whole number of milliseconds from 200 to 60000' })
  CAPTURE_TIMEOUT_MS = 2000;

  /**
   * Events older than their plan's days are deleted by the workers, except dead-lettered ones; an
   * endpoint's `retention_days` may shorten its plan's (README, "Retention").
   */
  @Transform(toPlanRetention)
  @IsInstance(PlanRetention, { message: RETENTION_DAYS_MESSAGE })
  RETENTION_DAYS = new PlanRetention({ free: 7, starter: 30, pro: 90, team: 365 });

  /** How often a worker looks for expired events (a pass deletes all it finds, a batch at a time). */
  @Transform(toInteger)
  @IsInt({ message: 'must be a whole number of milliseconds from 100 to 86400000' })
  @Min(100, { message: 'must be a whole number of milliseconds from 100 to 86400000' })
  @Max(86_400_000, { message: 'must be a whole number of milliseconds from 100 to 86400000' })
  RETENTION_INTERVAL_MS = 60_000;

  /** SITE_URL without a trailing slash (set by loadEnvironment, `http://localhost:PORT` by default). */
  get siteUrl(): string {
    return this.SITE_URL as string;
  }
}

export class ConfigurationError extends Error {}

function firstProblem(errors: ValidationError[]): string {
  const [error] = errors;
  const message = Object.values(error.constraints ?? {})[0] ?? 'is invalid';
  const shown = message.startsWith(error.property) ? message.slice(error.property.length + 1) : message;
  const secret = /SECRET|KEY/.test(error.property);
  const got = error.value === undefined ? 'nothing' : secret ? 'a hidden value' : JSON.stringify(error.value);
  return `${error.property} ${shown} (got ${got})`;
}

/** The variables that `loadEnvironment` reads back into this environment (to start a thread with it). */
export function environmentVariables(environment: Environment): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).flatMap(([name, value]: [string, unknown]) =>
      value === undefined ? [] : [[name, Array.isArray(value) ? value.join(',') : String(value)]],
    ),
  );
}

/** Reads and validates the environment; throws a ConfigurationError with one line naming the variable. */
export function loadEnvironment(source: Record<string, string | undefined>): Environment {
  const known = Object.fromEntries(
    Object.keys(new Environment())
      .concat([
        'SITE_URL',
        'JWT_SECRET',
        'ENCRYPTION_KEY',
        'ENCRYPTION_KEY_PREVIOUS',
        'SMTP_URL',
        'GEMINI_API_KEY',
        'GEMINI_BASE_URL',
        'CAPTURE_RATE_LIMIT_PER_S',
      ])
      .filter((name) => source[name] !== undefined && source[name] !== '')
      .map((name) => [name, source[name]]),
  );
  const environment = plainToInstance(Environment, known);
  const errors = validateSync(environment, { forbidUnknownValues: false });
  if (errors.length > 0) throw new ConfigurationError(`Configuration error: ${firstProblem(errors)}`);
  environment.SITE_URL = (environment.SITE_URL ?? `http://localhost:${environment.PORT}`).replace(/\/+$/, '');
  return environment;
}
