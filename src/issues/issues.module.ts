import { Module } from '@nestjs/common';
import { AiModule } from '../ai/ai.module';
import { IssuesController } from './issues.controller';
import { IssuesRepository } from './issues.repository';
import { IssuesService } from './issues.service';

/** The issues API: a user's issues, with the AI engine's diagnosis of the latest failure. */
@Module({
  imports: [AiModule],
  controllers: [IssuesController],
  providers: [IssuesService, IssuesRepository],
})
export class IssuesModule {}
