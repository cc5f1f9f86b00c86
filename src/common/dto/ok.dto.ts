import { ApiProperty } from '@nestjs/swagger';

/** The answer of a call that has nothing else to say. */
export class OkDto {
  @ApiProperty({ example: true })
  ok!: boolean;
}
