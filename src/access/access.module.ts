import { Module } from '@nestjs/common';
import { AccessRepository } from './access.repository';
import { AccessService } from './access.service';
import { Revocations } from './revocations';
import { RouteAuthorizer } from './route-authorizer';

/** Who may reach what: the one access component every route and service asks. */
@Module({
  providers: [AccessRepository, AccessService, RouteAuthorizer, Revocations],
  exports: [AccessService, RouteAuthorizer, Revocations],
})
export class AccessModule {}
