import { Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { AiController } from './ai.controller';
import { AiRepository } from './ai.repository';
import { AI_PROVIDER, AiService } from './ai.service';
import type { AiProvider } from './ai.types';
import type { DeliveryPolicy } from './delivery-policy';
import { GeminiAiProvider } from './gemini-ai.provider';
import { LocalAiPool } from './local/local-ai.pool';
import { UserThrottlerGuard } from '../common/guards/user-throttler.guard';

/** The delivery engine's time-out and retries, which diagnoses describe. */
const deliveryPolicy = (config: ConfigService<Environment, true>): DeliveryPolicy => ({
  timeoutMs: config.get('DELIVERY_TIMEOUT_MS', { infer: true }),
  retryDelaysMs: config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true }),
});

/** AI analysis of events: Gemini when GEMINI_API_KEY is set (falling back to the local engine), else the local engine. */
@Module({
  controllers: [AiController],
  providers: [
    AiRepository,
    AiService,
    UserThrottlerGuard,
    {
      provide: LocalAiPool,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => new LocalAiPool(deliveryPolicy(config)),
    },
    {
      provide: AI_PROVIDER,
      inject: [ConfigService, LocalAiPool],
      useFactory: (config: ConfigService<Environment, true>, local: LocalAiPool): AiProvider => {
        const apiKey = config.get('GEMINI_API_KEY', { infer: true });
        if (!apiKey) {
          new Logger('AI').log('GEMINI_API_KEY is not set: the local engine answers AI requests');
          return local;
        }
        return new GeminiAiProvider(
          {
            apiKey,
            model: config.get('GEMINI_MODEL', { infer: true }),
            baseUrl: config.get('GEMINI_BASE_URL', { infer: true }),
            delivery: deliveryPolicy(config),
          },
          local,
        );
      },
    },
  ],
  exports: [AiService],
})
export class AiModule {}
