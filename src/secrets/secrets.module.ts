import { EntityManager } from '@mikro-orm/postgresql';
import { Global, Module, type Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { SecretBox } from './secret-box';
import { generatedEncryptionKey, sealPlaintextSecrets } from './stored-secrets';

export const SECRET_BOX = Symbol('SECRET_BOX');

/**
 * The process's SecretBox: ENCRYPTION_KEY (and ENCRYPTION_KEY_PREVIOUS during a rotation) or, outside
 * production, a key made once and kept in the database (createApp warns of it). That every stored secret
 * opens under these keys was checked before the application was built (checkStoredSecrets); secrets an
 * earlier version stored in plain text are sealed here.
 */
const secretBoxProvider: Provider = {
  provide: SECRET_BOX,
  inject: [ConfigService, EntityManager],
  useFactory: async (config: ConfigService<Environment, true>, em: EntityManager): Promise<SecretBox> => {
    const configured = config.get('ENCRYPTION_KEY', { infer: true });
    const previous = config.get('ENCRYPTION_KEY_PREVIOUS', { infer: true });
    const connection = em.getConnection();
    const box = new SecretBox(
      configured ? Buffer.from(configured, 'base64') : await generatedEncryptionKey(connection),
      previous ? Buffer.from(previous, 'base64') : undefined,
    );
    await sealPlaintextSecrets(connection, box);
    return box;
  },
};

/** Seals and opens the secrets kept in the database (destination signing secrets, ingest rule secrets). */
@Global()
@Module({ providers: [secretBoxProvider], exports: [SECRET_BOX] })
export class SecretsModule {}
