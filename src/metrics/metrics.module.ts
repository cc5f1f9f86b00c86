import { Global, Module } from '@nestjs/common';
import { EventLoopMonitor } from '../common/event-loop-monitor';
import { DeliveryModule } from '../delivery/delivery.module';
import { MetricsController } from './metrics.controller';
import { Metrics } from './metrics.service';

/**
 * `GET /metrics`, the `Metrics` counters and the process's EventLoopMonitor, injectable anywhere (global),
 * in every APP_ROLE.
 */
@Global()
@Module({
  imports: [DeliveryModule],
  controllers: [MetricsController],
  providers: [Metrics, EventLoopMonitor],
  exports: [Metrics, EventLoopMonitor],
})
export class MetricsModule {}
