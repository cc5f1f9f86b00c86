import { Module } from '@nestjs/common';
import { NotificationsModule } from '../notifications/notifications.module';
import { IssueTracker } from './issue-tracker';

/** What the delivery engine needs of issues: the tracker it calls as it records attempts. */
@Module({
  imports: [NotificationsModule],
  providers: [IssueTracker],
  exports: [IssueTracker],
})
export class IssueTrackingModule {}
