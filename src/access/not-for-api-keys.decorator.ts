import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiForbiddenResponse } from '@nestjs/swagger';

export const NOT_FOR_API_KEYS = 'hooktrail:notForApiKeys';

/**
 * Restricts a route (or controller) to callers signed in with their password (a JWT): 403 for an API key, so
 * that a leaked key cannot mint or revoke keys.
 */
export const NotForApiKeys = () =>
  applyDecorators(
    SetMetadata(NOT_FOR_API_KEYS, true),
    ApiForbiddenResponse({ description: 'Called with an API key: API keys cannot manage API keys' }),
  );
