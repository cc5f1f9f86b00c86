import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { DeliveryModule } from '../delivery/delivery.module';
import { EndpointsController } from './endpoints.controller';
import { EndpointsRepository } from './endpoints.repository';
import { EndpointsService } from './endpoints.service';

/** Endpoints: a user's own and their teams'. */
@Module({
  imports: [AccessModule, DeliveryModule],
  controllers: [EndpointsController],
  providers: [EndpointsService, EndpointsRepository],
})
export class EndpointsModule {}
