import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsIn, IsString, Length, MaxLength } from 'class-validator';
import { INVITABLE_ROLES, type InvitableRole } from '../../access/roles';
import { Trim } from '../../common/dto/fields';

/** The longest address RFC 5321 lets through. */
const EMAIL_MAX_LENGTH = 254;
/** Tokens are 43 characters (32 bytes, base64url); anything much longer names no invitation. */
const TOKEN_MAX_LENGTH = 200;

export class CreateTeamInvitationDto {
  /**
   * Who to invite: the invitation mail goes here, and only the user registered with this address
   * (compared case-insensitively) may accept it.
   */
  @Trim()
  @IsEmail({}, { message: `email must be a valid email address (at most ${EMAIL_MAX_LENGTH} characters)` })
  @MaxLength(EMAIL_MAX_LENGTH, {
    message: `email must be a valid email address (at most ${EMAIL_MAX_LENGTH} characters)`,
  })
  email!: string;

  /** The role they get on accepting; an owner is made by an owner, from a member. */
  @ApiProperty({ enum: INVITABLE_ROLES, example: 'member' })
  @IsIn(INVITABLE_ROLES, { message: `role must be one of ${INVITABLE_ROLES.join(', ')}` })
  role!: InvitableRole;
}

export class AcceptTeamInvitationDto {
  /** The token of the invitation mail's link (`#/invitations/accept?token=...`). */
  @IsString({ message: 'token must be a string' })
  @Length(1, TOKEN_MAX_LENGTH, { message: `token must be 1 to ${TOKEN_MAX_LENGTH} characters` })
  token!: string;
}

export class TeamInvitationDto {
  /** @example 6a7b8c9d-0e1f-4a2b-9c3d-4e5f6a7b8c9d */
  id!: string;
  /** Lower-cased. @example ada@example.com */
  email!: string;
  @ApiProperty({ enum: INVITABLE_ROLES })
  role!: InvitableRole;
  /** ISO 8601 UTC: the link stops working then (7 days after it was sent). */
  expires_at!: string;
  /** ISO 8601 UTC. */
  created_at!: string;
}

export class TeamInvitationResponseDto {
  invitation!: TeamInvitationDto;
}

export class TeamInvitationListResponseDto {
  /** The pending invitations (neither accepted nor expired), newest first. */
  invitations!: TeamInvitationDto[];
}
