import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import Redis from 'ioredis';
import { redisOptions } from '../common/redis-connection';
import type { Environment } from '../config/environment';

export const REDIS = Symbol('REDIS');

@Injectable()
class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** One shared ioredis client for commands (health, publishing); Bull keeps its own connections. */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => {
        const client = new Redis({
          ...redisOptions(config.get('REDIS_URL', { infer: true })),
          maxRetriesPerRequest: 1,
        });
        client.on('error', () => undefined); // reconnects by itself; health/ready reports the outage
        return client;
      },
    },
    RedisCloser,
  ],
  exports: [REDIS],
})
export class RedisModule {}
