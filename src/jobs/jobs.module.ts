import { BullModule } from '@nestjs/bull';
import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { ALERT_QUEUE } from './alert-jobs';
import { BULK_REPLAY_QUEUE } from './bulk-replay-jobs';
import {
  DELIVERY_BACKOFF,
  DELIVERY_QUEUE,
  type DeliveryBackoffOptions,
  deliveryBackoff,
} from './delivery-jobs';
import { FIFO_PUMP_QUEUE } from './fifo-pump-jobs';
import { NOTIFICATION_QUEUE } from './notification-jobs';

/**
 * Every queue of the service, registered once for the whole application (global): a module that adds jobs
 * or processes them injects its queue by name (`@InjectQueue`), whichever layer it is on, and the metrics
 * read the delivery queue's figures without importing the delivery engine.
 */
@Global()
@Module({
  imports: [
    BullModule.registerQueueAsync({
      name: DELIVERY_QUEUE,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => {
        const delays = config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true });
        return {
          settings: {
            backoffStrategies: {
              [DELIVERY_BACKOFF]: (attemptsMade: number, error: Error, options?: DeliveryBackoffOptions) =>
                deliveryBackoff(delays, attemptsMade, error, options),
            },
            // A job whose worker died is handed to another worker once its lock lapses.
            lockDuration: config.get('DELIVERY_TIMEOUT_MS', { infer: true }) + 20_000,
            stalledInterval: 5_000,
            maxStalledCount: 3,
          },
        };
      },
    }),
    // A pump's job runs as long as its destination has deliveries ready; a dead worker's is taken over in ~20 s.
    BullModule.registerQueue({
      name: FIFO_PUMP_QUEUE,
      settings: { lockDuration: 15_000, stalledInterval: 5_000 },
    }),
    // A replay's job runs as long as the replay (its lock renewed meanwhile); the job of a worker that died
    // is taken over within about 20 s. Two workers running one replay at once (a lock lost under load)
    // dispatch nothing twice: each chunk locks the replay's row.
    BullModule.registerQueue({
      name: BULK_REPLAY_QUEUE,
      settings: { lockDuration: 15_000, stalledInterval: 5_000 },
    }),
    BullModule.registerQueue({ name: ALERT_QUEUE }),
    BullModule.registerQueue({ name: NOTIFICATION_QUEUE }),
  ],
  exports: [BullModule],
})
export class JobsModule {}
