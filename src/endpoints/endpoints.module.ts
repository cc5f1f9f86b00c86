import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module';
import { EndpointsController } from './endpoints.controller';
import { EndpointsRepository } from './endpoints.repository';
import { EndpointsService } from './endpoints.service';

/** Endpoints of a user; exports the ownership check its sub-resources (destinations, events) use. */
@Module({
  imports: [DeliveryModule],
  controllers: [EndpointsController],
  providers: [EndpointsService, EndpointsRepository],
  exports: [EndpointsService],
})
export class EndpointsModule {}
