import { MailerService } from '@nestjs-modules/mailer';
import {
  BadRequestException,
  ConflictException,
  ForbiddenException,
  Injectable,
  Logger,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import { hashToken } from '../common/token-hash';
import type { Environment } from '../config/environment';
import { normalizeEmail } from '../model/users.repository';
import type { CreateTeamInvitationDto, TeamInvitationDto } from './dto/team-invitation.dto';
import type { TeamDto } from './dto/team.dto';
import { acceptUrl, invitationMail } from './invitation-mail';
import {
  type AcceptOutcome,
  type InvitationToSend,
  TeamInvitationsRepository,
} from './team-invitations.repository';
import { toTeamInvitationDto } from './team.presenter';
import { TeamsService } from './teams.service';
import { afterCommit } from '../database/write-transaction';

/** How long an invitation's link works. */
export const INVITATION_VALID_DAYS = 7;
/**
 * Pending invitations one team may have: enough to bring a whole department in at once, and a bound on the
 * mail one admin can make the service send.
 */
export const MAX_PENDING_INVITATIONS = 50;
const INVITATION_NOT_FOUND = 'invitation not found';
const INVALID_TOKEN = 'token is unknown, already used, revoked or expired';

/**
 * Invitations to a team: each mails a link with a single-use token (32 random bytes, kept only as its
 * SHA-256 hash) that the invitee, signed in with the address invited, accepts within INVITATION_VALID_DAYS.
 */
@Injectable()
export class TeamInvitationsService {
  private readonly logger = new Logger(TeamInvitationsService.name);
  private readonly siteUrl: string;
  /** Without SMTP_URL the mail goes nowhere: the log says so (never with its link, a credential). */
  private readonly logOnly: boolean;

  constructor(
    private readonly invitations: TeamInvitationsRepository,
    private readonly teams: TeamsService,
    private readonly mailer: MailerService,
    config: ConfigService<Environment, true>,
  ) {
    this.siteUrl = config.get('siteUrl', { infer: true });
    this.logOnly = !config.get('SMTP_URL', { infer: true });
  }

  /**
   * Invites `email` with `role` and mails the link. One link per address works: once the mail is sent, an
   * earlier invitation to the same address stops working. The mail goes once the invitation (and its audit
   * entry) has committed, so that a slow mail server holds no connection of the pool; one that cannot be
   * sent revokes the invitation again (the audit log keeps its `invitation.created`) and answers 503.
   */
  async invite(caller: AuthUser, teamId: string, input: CreateTeamInvitationDto): Promise<TeamInvitationDto> {
    const email = normalizeEmail(input.email);
    if (await this.teams.hasMemberWithEmail(teamId, email))
      throw new ConflictException(`${email} is already a member of this team`);
    if ((await this.invitations.countPendingExcept(teamId, email)) >= MAX_PENDING_INVITATIONS)
      throw new ConflictException(
        `this team has ${MAX_PENDING_INVITATIONS} pending invitations, the most allowed: revoke one first`,
      );
    const token = randomBytes(32).toString('base64url');
    const created = await this.invitations.create({
      teamId,
      email,
      role: input.role,
      tokenHash: hashToken(token),
      invitedBy: caller.id,
      validDays: INVITATION_VALID_DAYS,
    });
    await afterCommit(async () => {
      await this.send(created, token);
      await this.invitations.revokeOthers(created.invitation);
    });
    return toTeamInvitationDto(created.invitation);
  }

  async listPending(teamId: string): Promise<TeamInvitationDto[]> {
    return (await this.invitations.listPending(teamId)).map(toTeamInvitationDto);
  }

  async revoke(teamId: string, invitationId: string): Promise<void> {
    if (!(await this.invitations.revoke(teamId, invitationId)))
      throw new NotFoundException(INVITATION_NOT_FOUND);
  }

  /** Joins the caller to the invitation's team with its role; the token is used up. */
  async accept(caller: AuthUser, token: string): Promise<TeamDto> {
    const accepted = await this.invitations.accept(hashToken(token), caller.id);
    if (accepted.outcome !== 'accepted') throw refusal(accepted.outcome);
    return this.teams.get(caller, accepted.teamId);
  }

  private async send({ invitation, teamName, inviterName }: InvitationToSend, token: string): Promise<void> {
    const mail = invitationMail({
      to: invitation.email,
      teamName,
      inviterName,
      role: invitation.role,
      acceptUrl: acceptUrl(this.siteUrl, token),
      expiresAt: invitation.expiresAt,
    });
    const context = { teamId: invitation.teamId, invitationId: invitation.id, to: invitation.email };
    try {
      await this.mailer.sendMail(mail);
    } catch (error) {
      await this.invitations.revoke(invitation.teamId, invitation.id);
      this.logger.error({ ...context, err: error }, 'invitation mail not sent');
      throw new ServiceUnavailableException(
        'the invitation mail could not be sent, so no invitation was made: try again later',
      );
    }
    if (this.logOnly) this.logger.warn(context, 'SMTP_URL is not set: invitation made, but no mail was sent');
    else this.logger.log(context, 'invitation mail sent');
  }
}

/** The answer to an invitation that was not accepted. */
function refusal(outcome: Exclude<AcceptOutcome['outcome'], 'accepted'>): Error {
  switch (outcome) {
    case 'invalid':
      return new BadRequestException(INVALID_TOKEN);
    case 'wrong_recipient':
      return new ForbiddenException(
        'this invitation was sent to another email address: sign in with that address to accept it',
      );
    case 'already_member':
      return new ConflictException('you are already a member of this team');
  }
}
