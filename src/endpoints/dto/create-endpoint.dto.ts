import { IsString, Length } from 'class-validator';
import { NAME_MAX_LENGTH, Trim, trimmedLengthMessage } from '../../common/dto/fields';
import { EndpointPlacementDto } from './endpoint-placement.dto';

export class CreateEndpointDto extends EndpointPlacementDto {
  /** A label for the endpoint, 1 to 200 characters (trimmed), e.g. "Stripe production". */
  @Trim()
  @IsString({ message: 'name must be a string' })
  @Length(1, NAME_MAX_LENGTH, { message: trimmedLengthMessage('name', NAME_MAX_LENGTH) })
  name!: string;
}
