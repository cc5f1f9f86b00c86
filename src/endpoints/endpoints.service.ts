import { BadRequestException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Grant } from '../access/access.repository';
import { AccessService, NOT_FOUND } from '../access/access.service';
import { revoked, Revocations } from '../access/revocations';
import type { Role } from '../access/roles';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import type { Environment } from '../config/environment';
import { DestinationBacklogs } from '../delivery/destination-backlogs.service';
import type { SecretBox } from '../secrets/secret-box';
import { SECRET_BOX } from '../secrets/secrets.module';
import type { CreateEndpointDto } from './dto/create-endpoint.dto';
import type { EndpointDto, EndpointWithDestinationsDto } from './dto/endpoint.dto';
import type { UpdateEndpointDto } from './dto/update-endpoint.dto';
import type { IngestRuleFieldsDto } from './dto/ingest-rules.dto';
import type { Endpoint } from '../model/endpoint.entity';
import { toEndpointDto, toEndpointWithDestinationsDto } from './endpoint.presenter';
import {
  dedupSettingsOf,
  dedupSourceOf,
  inboundAuthSecretOf,
  inboundAuthSettingsOf,
  PROVIDER_DEDUP_IDS,
  verificationSettingsOf,
} from '../ingest/ingest-rules';
import { EndpointsRepository } from './endpoints.repository';

export const ENDPOINT_NOT_FOUND = NOT_FOUND.endpoint;

/**
 * Endpoints: one's own and one's teams'. Routes that name an endpoint reach these methods only once the
 * access guard has found the caller's grant on it (src/access); another's endpoint is a 404 there.
 */
@Injectable()
export class EndpointsService {
  private readonly siteUrl: string;

  constructor(
    private readonly endpoints: EndpointsRepository,
    private readonly access: AccessService,
    private readonly revocations: Revocations,
    private readonly backlogs: DestinationBacklogs,
    @Inject(SECRET_BOX) private readonly secrets: SecretBox,
    config: ConfigService<Environment, true>,
  ) {
    this.siteUrl = config.get('siteUrl', { infer: true });
  }

  /** The caller's own endpoints and their teams', newest first, each with the caller's role. */
  async list(caller: AuthUser): Promise<EndpointDto[]> {
    const teamRoles = await this.access.teamRoles(caller.id);
    const endpoints = await this.endpoints.listReadable(caller.id, [...teamRoles.keys()]);
    return endpoints.map((endpoint) =>
      this.present(endpoint, endpoint.teamId === null ? 'owner' : teamRoles.get(endpoint.teamId)!),
    );
  }

  /** In `team_id` (the caller must be a member or above there: 404 when not in it, 403 as a viewer). */
  async create(caller: AuthUser, input: CreateEndpointDto): Promise<EndpointDto> {
    const teamId = input.team_id ?? null;
    const role = teamId === null ? 'owner' : (await this.joinable(caller, teamId)).role;
    const endpoint = this.endpoints.build(caller.id, input.name, teamId);
    if (input.retention_days !== undefined) endpoint.retentionDays = input.retention_days;
    this.applyRules(endpoint, input);
    await this.endpoints.save();
    return this.present(endpoint, role);
  }

  async get(grant: Grant, id: string): Promise<EndpointWithDestinationsDto> {
    const endpoint = await this.endpoints.findWithDestinations(id);
    if (!endpoint) throw new NotFoundException(ENDPOINT_NOT_FOUND);
    return toEndpointWithDestinationsDto(endpoint, grant, this.siteUrl, this.backlogs, this.secrets);
  }

  /** Changes only the fields sent; `metadata` and each ingest rule sent are replaced as a whole. */
  async update(caller: AuthUser, grant: Grant, id: string, changes: UpdateEndpointDto): Promise<EndpointDto> {
    const endpoint = await this.endpoints.find(id);
    if (!endpoint) throw new NotFoundException(ENDPOINT_NOT_FOUND);
    const teamBefore = endpoint.teamId;
    const role =
      changes.team_id === undefined ? grant.role : await this.move(caller, grant, endpoint, changes.team_id);
    if (changes.name !== undefined) endpoint.name = changes.name;
    if (changes.is_active !== undefined) endpoint.isActive = changes.is_active;
    if (changes.metadata !== undefined) endpoint.metadata = changes.metadata;
    if (changes.retention_days !== undefined) endpoint.retentionDays = changes.retention_days;
    this.applyRules(endpoint, changes);
    await this.endpoints.save();
    // Its live streams end, and reconnect only where the new owner or team lets them.
    if (endpoint.teamId !== teamBefore) await this.revocations.announce(revoked.endpoint(id));
    return this.present(endpoint, role);
  }

  /**
   * Moves the endpoint into `teamId` (the caller a member or above there) or, with null, to the caller's
   * own endpoints; taking it out of its team needs an admin of that team. Answers the caller's new role.
   */
  private async move(
    caller: AuthUser,
    grant: Grant,
    endpoint: Endpoint,
    teamId: string | null,
  ): Promise<Role> {
    if (teamId === endpoint.teamId) return grant.role;
    if (endpoint.teamId !== null) await this.access.require(caller, 'team.manage', 'team', endpoint.teamId);
    const role = teamId === null ? 'owner' : (await this.joinable(caller, teamId)).role;
    endpoint.teamId = teamId;
    if (teamId === null) endpoint.user = this.endpoints.userReference(caller.id);
    return role;
  }

  /** The caller's grant on a team they may add endpoints to. */
  private joinable(caller: AuthUser, teamId: string): Promise<Grant> {
    return this.access.require(caller, 'endpoint.write', 'team', teamId);
  }

  private present(endpoint: Endpoint, role: Role): EndpointDto {
    return toEndpointDto(endpoint, role, this.siteUrl, this.secrets);
  }

  /**
   * Sets the ingest rules sent (null removes one), sealing their secrets. A rule sent without its secret
   * keeps the stored one when it is of the same provider or type; 400 when there is none to keep, or when
   * `dedup.key: "provider"` is left without a provider that sends ids.
   */
  private applyRules(endpoint: Endpoint, input: IngestRuleFieldsDto): void {
    const { verification, inbound_auth: inboundAuth, dedup } = input;
    if (verification === null) [endpoint.verification, endpoint.verificationSecret] = [null, null];
    else if (verification !== undefined) {
      endpoint.verificationSecret = this.sealedSecret(
        verification.secret,
        verification.provider === endpoint.verification?.provider ? endpoint.verificationSecret : null,
        'verification.secret',
      );
      endpoint.verification = verificationSettingsOf(verification);
    }
    if (inboundAuth === null) [endpoint.inboundAuth, endpoint.inboundAuthSecret] = [null, null];
    else if (inboundAuth !== undefined) {
      endpoint.inboundAuthSecret = this.sealedSecret(
        inboundAuthSecretOf(inboundAuth),
        inboundAuth.type === endpoint.inboundAuth?.type ? endpoint.inboundAuthSecret : null,
        inboundAuth.type === 'basic' ? 'inbound_auth.password' : 'inbound_auth.value',
      );
      endpoint.inboundAuth = inboundAuthSettingsOf(inboundAuth);
    }
    if (dedup !== undefined) endpoint.dedup = dedup === null ? null : dedupSettingsOf(dedup);
    if (
      endpoint.dedup !== null &&
      dedupSourceOf(endpoint.dedup.key, endpoint.verification?.provider) === null
    )
      throw new BadRequestException([
        `dedup.key "provider" needs a verification provider that sends an id (${Object.keys(PROVIDER_DEDUP_IDS).join(', ')})`,
      ]);
  }

  /** The secret sent, sealed, else the stored one; 400 naming `field` when there is neither. */
  private sealedSecret(sent: string | undefined, stored: string | null, field: string): string {
    if (sent !== undefined) return this.secrets.seal(sent);
    if (stored === null) throw new BadRequestException([`${field} is required`]);
    return stored;
  }

  async remove(id: string): Promise<void> {
    if (!(await this.endpoints.delete(id))) throw new NotFoundException(ENDPOINT_NOT_FOUND);
  }
}
