import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'hooktrail:isPublic';

/** Opts a route out of the global JWT guard (register, login, refresh, health). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
