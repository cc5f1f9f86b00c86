// Used by the MikroORM CLI: `npm run migration:create` and `npm run migration:up`.
import { loadEnvironment } from './src/config/environment';
import { ormOptions } from './src/database/orm-options';

export default ormOptions(loadEnvironment(process.env).DATABASE_URL);
