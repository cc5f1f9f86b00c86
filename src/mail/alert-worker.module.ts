import { Module } from '@nestjs/common';
import { AlertWorker } from './alert-worker.service';
import { MailModule } from './mail.module';

/** What a worker runs for dead-letter alerts: the mail processor and the sweep of overdue alerts. */
@Module({ imports: [MailModule], providers: [AlertWorker] })
export class AlertWorkerModule {}
