import { type DynamicModule, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { Metrics, PROCESS_METRICS } from './metrics.service';

/**
 * `GET /metrics` and the `Metrics` counters, injectable anywhere (global), in every APP_ROLE.
 * `processMetrics`: whether they include Node's own (PROCESS_METRICS).
 */
@Module({})
export class MetricsModule {
  static forRoot(processMetrics: boolean): DynamicModule {
    return {
      module: MetricsModule,
      global: true,
      controllers: [MetricsController],
      providers: [{ provide: PROCESS_METRICS, useValue: processMetrics }, Metrics],
      exports: [Metrics],
    };
  }
}
