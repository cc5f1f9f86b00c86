import { EntityManager } from '@mikro-orm/postgresql';
import { Logger, type Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import type { Environment } from '../config/environment';

export const JWT_SECRET = Symbol('JWT_SECRET');
const SETTING_KEY = 'jwt_secret';

/**
 * JWT_SECRET from the environment, or (outside production) a random secret made once and kept in
 * the database, so restarts and every process of the deployment share it.
 */
export const jwtSecretProvider: Provider = {
  provide: JWT_SECRET,
  inject: [ConfigService, EntityManager],
  useFactory: async (config: ConfigService<Environment, true>, em: EntityManager): Promise<string> => {
    const configured = config.get('JWT_SECRET', { infer: true });
    if (configured) return configured;
    const connection = em.getConnection();
    await connection.execute(
      `insert into app_settings (key, value) values (?, ?) on conflict (key) do nothing`,
      [SETTING_KEY, randomBytes(48).toString('base64url')],
    );
    const [row] = await connection.execute<{ value: string }[]>(
      `select value from app_settings where key = ?`,
      [SETTING_KEY],
    );
    new Logger('Auth').warn(
      'JWT_SECRET is not set: using a generated secret kept in the database (set JWT_SECRET in production)',
    );
    return row.value;
  },
};
