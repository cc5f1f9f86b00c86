import { Module } from '@nestjs/common';
import { ApiKeyRevocations } from './api-key-revocations';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysService } from './api-keys.service';

@Module({
  controllers: [ApiKeysController],
  providers: [ApiKeysService, ApiKeyRevocations],
  exports: [ApiKeysService, ApiKeyRevocations],
})
export class ApiKeysModule {}
