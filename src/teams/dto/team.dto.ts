import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { ROLES, type Role } from '../../access/roles';
import { Trim, trimmedLengthMessage } from '../../common/dto/fields';

export const TEAM_NAME_MAX_LENGTH = 100;

export class CreateTeamDto {
  /** The team's name, 1 to 100 characters (trimmed), e.g. "Payments". */
  @Trim()
  @IsString({ message: 'name must be a string' })
  @Length(1, TEAM_NAME_MAX_LENGTH, { message: trimmedLengthMessage('name', TEAM_NAME_MAX_LENGTH) })
  name!: string;
}

export class UpdateTeamDto extends CreateTeamDto {}

export class TeamDto {
  /** @example 3c9d7f0e-2b1a-4e6f-8d5c-1a2b3c4d5e6f */
  id!: string;
  /** @example Payments */
  name!: string;
  /** Your role in the team: `viewer` reads, `member` also writes endpoints, `admin` also manages members, `owner` also deletes the team. */
  @ApiProperty({ enum: ROLES })
  role!: Role;
  @ApiProperty({ type: 'integer', example: 4 })
  member_count!: number;
  /** ISO 8601 UTC. */
  created_at!: string;
}

export class TeamResponseDto {
  team!: TeamDto;
}

export class TeamListResponseDto {
  /** The teams you are a member of, oldest first. */
  teams!: TeamDto[];
}
