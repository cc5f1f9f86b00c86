import { ApiProperty } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { ROLES, type Role } from '../../access/roles';

export class UpdateTeamMemberDto {
  /**
   * The member's new role. Admins may give admin, member or viewer to anyone but an owner; making someone
   * owner, or changing an owner's role, needs an owner; the team keeps at least one owner (409).
   * @example admin
   */
  @ApiProperty({ enum: ROLES })
  @IsIn(ROLES, { message: `role must be one of ${ROLES.join(', ')}` })
  role!: Role;
}

export class TeamMemberUserDto {
  /** @example 8d0e1f2a-3b4c-4d5e-8f6a-7b8c9d0e1f2a */
  id!: string;
  /** @example ada@example.com */
  email!: string;
  /** @example Ada Lovelace */
  name!: string;
}

export class TeamMemberDto {
  user!: TeamMemberUserDto;
  @ApiProperty({ enum: ROLES })
  role!: Role;
  /** ISO 8601 UTC: when they joined (the team's creator: when it was created). */
  joined_at!: string;
}

export class TeamMemberResponseDto {
  member!: TeamMemberDto;
}

export class TeamMemberListResponseDto {
  /** The earliest to join first. */
  members!: TeamMemberDto[];
}
