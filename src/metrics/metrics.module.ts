import { Global, Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module';
import { MetricsController } from './metrics.controller';
import { Metrics } from './metrics.service';

/** `GET /metrics` and the `Metrics` counters, injectable anywhere (global), in every APP_ROLE. */
@Global()
@Module({
  imports: [DeliveryModule],
  controllers: [MetricsController],
  providers: [Metrics],
  exports: [Metrics],
})
export class MetricsModule {}
