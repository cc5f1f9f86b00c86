import { Injectable, NotFoundException, type PipeTransform } from '@nestjs/common';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A path id that is not a UUID names nothing that exists: 404, exactly like an unknown or another
 * user's id (never a 400 or a database error).
 */
@Injectable()
export class ResourceIdPipe implements PipeTransform<string, string> {
  constructor(private readonly resource: string) {}

  transform(value: string): string {
    if (!UUID.test(value)) throw new NotFoundException(`${this.resource} not found`);
    return value.toLowerCase();
  }
}
