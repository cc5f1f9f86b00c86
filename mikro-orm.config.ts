// Used by the MikroORM CLI: `npm run migration:create` and `npm run migration:up`. Reads ./.env as the
// service does (MikroORM's own loading of it passes on only MIKRO_ORM_* variables).
import { existsSync } from 'node:fs';
import { loadEnvironment } from './src/config/environment';
import { migrationOptions } from './src/database/migration-options';

if (existsSync('.env')) process.loadEnvFile('.env');

export default migrationOptions(loadEnvironment(process.env).DATABASE_URL);
