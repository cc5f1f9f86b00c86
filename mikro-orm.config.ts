// Used by the MikroORM CLI: `npm run migration:create` and `npm run migration:up`.
import { loadEnvironment } from './src/config/environment';
import { migrationOptions } from './src/database/migration-options';

export default migrationOptions(loadEnvironment(process.env).DATABASE_URL);
