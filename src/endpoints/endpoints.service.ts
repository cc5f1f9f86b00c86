import { BadRequestException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { DestinationBacklogs } from '../delivery/destination-backlogs.service';
import type { SecretBox } from '../secrets/secret-box';
import { SECRET_BOX } from '../secrets/secrets.module';
import type { CreateEndpointDto } from './dto/create-endpoint.dto';
import type { EndpointDto, EndpointWithDestinationsDto } from './dto/endpoint.dto';
import type { UpdateEndpointDto } from './dto/update-endpoint.dto';
import type { IngestRuleFieldsDto } from './dto/ingest-rules.dto';
import type { Endpoint } from './endpoint.entity';
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

export const ENDPOINT_NOT_FOUND = 'endpoint not found';

/** Endpoints of one user: another user's endpoint is answered exactly like a missing one (404). */
@Injectable()
export class EndpointsService {
  private readonly siteUrl: string;

  constructor(
    private readonly endpoints: EndpointsRepository,
    private readonly backlogs: DestinationBacklogs,
    @Inject(SECRET_BOX) private readonly secrets: SecretBox,
    config: ConfigService<Environment, true>,
  ) {
    this.siteUrl = config.get('siteUrl', { infer: true });
  }

  async list(userId: string): Promise<EndpointDto[]> {
    const endpoints = await this.endpoints.listOwned(userId);
    return endpoints.map((endpoint) => toEndpointDto(endpoint, this.siteUrl, this.secrets));
  }

  async create(userId: string, input: CreateEndpointDto): Promise<EndpointDto> {
    const endpoint = this.endpoints.build(userId, input.name);
    this.applyRules(endpoint, input);
    await this.endpoints.save();
    return toEndpointDto(endpoint, this.siteUrl, this.secrets);
  }

  async get(userId: string, id: string): Promise<EndpointWithDestinationsDto> {
    const endpoint = await this.endpoints.findOwnedWithDestinations(userId, id);
    if (!endpoint) throw new NotFoundException(ENDPOINT_NOT_FOUND);
    return toEndpointWithDestinationsDto(endpoint, this.siteUrl, this.backlogs, this.secrets);
  }

  /** Changes only the fields sent; `metadata` and each ingest rule sent are replaced as a whole. */
  async update(userId: string, id: string, changes: UpdateEndpointDto): Promise<EndpointDto> {
    const endpoint = await this.endpoints.findOwned(userId, id);
    if (!endpoint) throw new NotFoundException(ENDPOINT_NOT_FOUND);
    if (changes.name !== undefined) endpoint.name = changes.name;
    if (changes.is_active !== undefined) endpoint.isActive = changes.is_active;
    if (changes.metadata !== undefined) endpoint.metadata = changes.metadata;
    this.applyRules(endpoint, changes);
    await this.endpoints.save();
    return toEndpointDto(endpoint, this.siteUrl, this.secrets);
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

  async remove(userId: string, id: string): Promise<void> {
    if (!(await this.endpoints.deleteOwned(userId, id))) throw new NotFoundException(ENDPOINT_NOT_FOUND);
  }

  /** For the endpoint's sub-resources (destinations, events): 404 unless the endpoint is the user's. */
  async assertOwned(userId: string, id: string): Promise<void> {
    if (!(await this.endpoints.isOwned(userId, id))) throw new NotFoundException(ENDPOINT_NOT_FOUND);
  }
}
