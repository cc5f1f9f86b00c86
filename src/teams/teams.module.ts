import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { MailTransportModule } from '../outbound/mail-transport.module';
import { TeamInvitationsController } from './team-invitations.controller';
import { TeamInvitationsRepository } from './team-invitations.repository';
import { TeamInvitationsService } from './team-invitations.service';
import { TeamMembersController } from './team-members.controller';
import { TeamsController } from './teams.controller';
import { TeamsRepository } from './teams.repository';
import { TeamsService } from './teams.service';

/** The teams API: teams, their members and roles, and invitations mailed with a single-use link. */
@Module({
  imports: [AccessModule, MailTransportModule],
  controllers: [TeamsController, TeamMembersController, TeamInvitationsController],
  providers: [TeamsService, TeamsRepository, TeamInvitationsService, TeamInvitationsRepository],
})
export class TeamsModule {}
