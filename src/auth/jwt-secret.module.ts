import { Module } from '@nestjs/common';
import { JWT_SECRET, jwtSecretProvider } from './jwt-secret.provider';

/** Resolves the signing secret once, for the JWT module and the passport strategy. */
@Module({ providers: [jwtSecretProvider], exports: [JWT_SECRET] })
export class JwtSecretModule {}
