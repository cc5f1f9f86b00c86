import 'reflect-metadata';
import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { existsSync } from 'node:fs';
import { StartupError } from './common/startup-error';
import { ConfigurationError, loadEnvironment } from './config/environment';
import { prepareDatabase } from './database/database-bootstrap';
import { ormOptions } from './database/orm-options';
import { PLANS } from './users/user.entity';
import { UnknownPlanError, UnknownUserError, UsersService } from './users/users.service';
import { UsersModule } from './users/users.module';

const USAGE = `usage: npm run cli -- set-plan <email> <plan>   (plan: ${PLANS.join(', ')})`;

class UsageError extends Error {}

async function setPlan(email: string, plan: string): Promise<string> {
  const env = loadEnvironment(process.env);
  await prepareDatabase(env.DATABASE_URL);
  @Module({
    imports: [
      ConfigModule.forRoot({ ignoreEnvFile: true, skipProcessEnv: true, load: [() => ({ ...env })] }),
      MikroOrmModule.forRoot(ormOptions(env.DATABASE_URL)),
      UsersModule,
    ],
  })
  class CliModule {}
  const app = await NestFactory.createApplicationContext(CliModule, { logger: false });
  try {
    const user = await app.get(UsersService).setPlan(email, plan);
    return `${user.email} is now on the ${user.plan} plan`;
  } finally {
    await app.close();
  }
}

/** Operator commands: `npm run cli -- set-plan <email> <plan>` (there is no billing). */
async function main(args: string[]): Promise<string> {
  const [command, ...rest] = args;
  if (command === 'set-plan' && rest.length === 2) return setPlan(rest[0], rest[1]);
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
