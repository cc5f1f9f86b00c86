import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { AiResult } from '../model/ai-result.entity';
import { ApiKey } from '../model/api-key.entity';
import { AppSetting } from '../model/app-setting.entity';
import { RefreshToken } from '../model/refresh-token.entity';
import { Delivery } from '../model/delivery.entity';
import { Destination } from '../model/destination.entity';
import { Endpoint } from '../model/endpoint.entity';
import { WebhookEvent } from '../model/event.entity';
import { DeadLetterAlert } from '../model/dead-letter-alert.entity';
import { User } from '../model/user.entity';
import { SESSION_OPTIONS } from './session-options';

export const ENTITIES = [
  AppSetting,
  User,
  RefreshToken,
  ApiKey,
  Endpoint,
  Destination,
  WebhookEvent,
  Delivery,
  DeadLetterAlert,
  AiResult,
];

/**
 * MikroORM options for a database URL: explicit entities, never schema sync, the service's session options
 * (SESSION_OPTIONS). The service's ORM runs no migrations (`migrationOptions` does, once at start), so a
 * thread that only forwards never loads the migrator and its command-line tooling.
 */
export function ormOptions(databaseUrl: string): Options {
  return defineConfig({
    clientUrl: databaseUrl,
    entities: ENTITIES,
    forceUtcTimezone: true,
    pool: { min: 0, max: 10 },
    // MikroORM takes only the host, port, user, password and database from `clientUrl`; node-pg, given the
    // URL itself, reads the rest as the capture pool and the start's own connections do (`sslmode` first).
    driverOptions: { connection: { connectionString: databaseUrl, options: SESSION_OPTIONS } },
    discovery: { warnWhenNoEntities: true },
    ensureDatabase: false,
    allowGlobalContext: false,
  });
}
