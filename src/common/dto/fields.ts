import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationOptions } from 'class-validator';

export const NAME_MAX_LENGTH = 200;
export const METADATA_MAX_BYTES = 16 * 1024;

export const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** Trims a string before it is validated. */
export const Trim = () => Transform(trim);

/**
 * The message of a trimmed field's length, which says that the spaces at either end do not count: else a
 * value of spaces alone, empty once trimmed, is told it is not 1 to `max` characters long.
 */
export const trimmedLengthMessage = (field: string, max: number) =>
  `${field} must be 1 to ${max} characters, not counting spaces at either end`;

/** A JSON object (not an array, scalar or null) of at most 16 KiB once serialised. */
export function IsMetadataObject(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isMetadataObject',
      target: target.constructor,
      propertyName: String(propertyName),
      options: {
        message: `metadata must be a JSON object of at most ${METADATA_MAX_BYTES} bytes`,
        ...options,
      },
      validator: {
        validate(value: unknown): boolean {
          if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
          return Buffer.byteLength(JSON.stringify(value)) <= METADATA_MAX_BYTES;
        },
      },
    });
}

/** A field checked by a function that answers null when valid, else the message naming the path at fault. */
export function IsValidBy(problem: (value: unknown) => string | null): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isValidBy',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => problem(value) === null,
        defaultMessage: (args) => problem(args?.value) ?? '',
      },
    });
}
