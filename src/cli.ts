import 'reflect-metadata';
import { MikroOrmModule } from '@mikro-orm/nestjs';
import { EntityManager } from '@mikro-orm/postgresql';
import { type INestApplicationContext, Module, type ModuleMetadata } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { existsSync } from 'node:fs';
import { StartupError } from './common/startup-error';
import { ConfigurationError, type Environment, loadEnvironment } from './config/environment';
import { prepareDatabase } from './database/database-bootstrap';
import { ormOptions } from './database/orm-options';
import { SecretBox } from './secrets/secret-box';
import { missingKeyIds, type Query, resealSecrets, storedGeneratedKey } from './secrets/stored-secrets';
import { PLANS } from './common/plans';
import { UnknownPlanError, UnknownUserError, UsersService } from './users/users.service';
import { UsersModule } from './users/users.module';

const USAGE = [
  `usage: npm run cli -- set-plan <email> <plan>   (plan: ${PLANS.join(', ')})`,
  '       npm run cli -- rotate-encryption-key    (ENCRYPTION_KEY: the new key; ENCRYPTION_KEY_PREVIOUS: the old one)',
].join('\n');

class UsageError extends Error {}

/** Runs `work` in an application context of the database (migrated first) and `modules`. */
async function inContext<T>(
  modules: ModuleMetadata['imports'],
  work: (app: INestApplicationContext, env: Environment) => Promise<T>,
): Promise<T> {
  const env = loadEnvironment(process.env);
  await prepareDatabase(env.DATABASE_URL);
  @Module({
    imports: [
      ConfigModule.forRoot({ ignoreEnvFile: true, skipProcessEnv: true, load: [() => ({ ...env })] }),
      MikroOrmModule.forRoot(ormOptions(env.DATABASE_URL)),
      ...(modules ?? []),
    ],
  })
  class CliModule {}
  const app = await NestFactory.createApplicationContext(CliModule, { logger: false });
  try {
    return await work(app, env);
  } finally {
    await app.close();
  }
}

function setPlan(email: string, plan: string): Promise<string> {
  return inContext([UsersModule], async (app) => {
    const user = await app.get(UsersService).setPlan(email, plan);
    return `${user.email} is now on the ${user.plan} plan`;
  });
}

/**
 * Seals every stored secret under ENCRYPTION_KEY, opening it with ENCRYPTION_KEY_PREVIOUS (or, moving off a
 * development setup, the generated key kept in the database).
 */
function rotateEncryptionKey(): Promise<string> {
  return inContext([], async (app, env) => {
    if (!env.ENCRYPTION_KEY)
      throw new ConfigurationError('Configuration error: ENCRYPTION_KEY must be set to the key to rotate to');
    const connection = app.get(EntityManager).getConnection();
    const query: Query = (sql) => connection.execute(sql);
    const previous = env.ENCRYPTION_KEY_PREVIOUS
      ? Buffer.from(env.ENCRYPTION_KEY_PREVIOUS, 'base64')
      : await storedGeneratedKey(query);
    const box = new SecretBox(Buffer.from(env.ENCRYPTION_KEY, 'base64'), previous);
    const missing = await missingKeyIds(query, box.keyIds);
    if (missing.length > 0)
      throw new StartupError(
        `Stored secrets are sealed under key ${missing.join(', ')}, which is neither ENCRYPTION_KEY nor ENCRYPTION_KEY_PREVIOUS: nothing changed`,
      );
    const sealed = await resealSecrets(connection, box);
    return `${sealed} secret(s) sealed anew under key ${box.currentKeyId}; every stored secret is under it now`;
  });
}

/**
 * Operator commands: `npm run cli -- set-plan <email> <plan>` (there is no billing), and
 * `npm run cli -- rotate-encryption-key`.
 */
async function main(args: string[]): Promise<string> {
  const [command, ...rest] = args;
  if (command === 'set-plan' && rest.length === 2) return setPlan(rest[0], rest[1]);
  if (command === 'rotate-encryption-key' && rest.length === 0) return rotateEncryptionKey();
  throw new UsageError(command ? `unknown command or arguments: ${args.join(' ')}\n${USAGE}` : USAGE);
}

if (existsSync('.env')) process.loadEnvFile('.env');
main(process.argv.slice(2)).then(
  (message) => console.log(message),
  (error: unknown) => {
    const expected = [UsageError, UnknownPlanError, UnknownUserError, ConfigurationError, StartupError].some(
      (type) => error instanceof type,
    );
    console.error(expected ? (error as Error).message : error);
    process.exitCode = expected && !(error instanceof UsageError) ? 1 : 2;
  },
);
