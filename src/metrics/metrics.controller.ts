import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Registry } from 'prom-client';
import { Public } from '../common/decorators/public.decorator';
import { Metrics } from './metrics.service';

@ApiTags('metrics')
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  /**
   * Prometheus text format. Needs no token, like /health, so that a scraper can read it: serve it on a
   * private network only (block /metrics at the proxy that exposes capture URLs and the API).
   */
  @Get()
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  @ApiOperation({
    summary: 'Prometheus metrics: captures, delivery attempts, queue depth, event-loop lag',
    description:
      'Public (no token), for a Prometheus scraper; operators should not expose it to the internet. ' +
      'Queue figures (the delivery queue from Redis, the events waiting to be routed from PostgreSQL) are ' +
      'read on each scrape and are the same in every process.',
  })
  @ApiProduces(Registry.PROMETHEUS_CONTENT_TYPE)
  @ApiOkResponse({
    description: 'Metrics in the Prometheus text exposition format',
    schema: { type: 'string' },
  })
  scrape(): Promise<string> {
    return this.metrics.scrape();
  }
}
