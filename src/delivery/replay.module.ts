import { Module } from '@nestjs/common';
import { DeliveryModule } from './delivery.module';
import { ReplayController } from './replay.controller';
import { ReplayRepository } from './replay.repository';
import { ReplayService } from './replay.service';

/** The replay route of the API. */
@Module({
  imports: [DeliveryModule],
  controllers: [ReplayController],
  providers: [ReplayService, ReplayRepository],
})
export class ReplayModule {}
