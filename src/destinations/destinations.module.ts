import { Module } from '@nestjs/common';
import { EndpointsModule } from '../endpoints/endpoints.module';
import { DestinationsController } from './destinations.controller';
import { DestinationsRepository } from './destinations.repository';
import { DestinationsService } from './destinations.service';

@Module({
  imports: [EndpointsModule],
  controllers: [DestinationsController],
  providers: [DestinationsService, DestinationsRepository],
})
export class DestinationsModule {}
