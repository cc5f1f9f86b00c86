import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { join } from 'node:path';
import { AiResult } from '../ai/ai-result.entity';
import { ApiKey } from '../api-keys/api-key.entity';
import { AppSetting } from './app-setting.entity';
import { RefreshToken } from '../auth/refresh-token.entity';
import { Delivery } from '../delivery/delivery.entity';
import { Destination } from '../destinations/destination.entity';
import { Endpoint } from '../endpoints/endpoint.entity';
import { WebhookEvent } from '../events/event.entity';
import { DeadLetterAlert } from '../mail/dead-letter-alert.entity';
import { User } from '../users/user.entity';

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

/** MikroORM options for a database URL: explicit entities, checked-in migrations, never schema sync. */
export function ormOptions(databaseUrl: string): Options {
  const migrations = join(__dirname, 'migrations');
  return defineConfig({
    clientUrl: databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    forceUtcTimezone: true,
    pool: { min: 0, max: 10 },
    migrations: {
      path: migrations,
      pathTs: migrations,
      glob: '!(*.d).{js,ts}',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
      emit: 'ts',
    },
    discovery: { warnWhenNoEntities: true },
    ensureDatabase: false,
    allowGlobalContext: false,
  });
}
