import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { DestinationBacklogs } from '../delivery/destination-backlogs.service';
import type { SecretBox } from '../secrets/secret-box';
import { SECRET_BOX } from '../secrets/secrets.module';
import type { CreateEndpointDto } from './dto/create-endpoint.dto';
import type { EndpointDto, EndpointWithDestinationsDto } from './dto/endpoint.dto';
import type { UpdateEndpointDto } from './dto/update-endpoint.dto';
import { toEndpointDto, toEndpointWithDestinationsDto } from './endpoint.presenter';
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
    return endpoints.map((endpoint) => toEndpointDto(endpoint, this.siteUrl));
  }

  async create(userId: string, input: CreateEndpointDto): Promise<EndpointDto> {
    return toEndpointDto(await this.endpoints.create(userId, input.name), this.siteUrl);
  }

  async get(userId: string, id: string): Promise<EndpointWithDestinationsDto> {
    const endpoint = await this.endpoints.findOwnedWithDestinations(userId, id);
    if (!endpoint) throw new NotFoundException(ENDPOINT_NOT_FOUND);
    return toEndpointWithDestinationsDto(endpoint, this.siteUrl, this.backlogs, this.secrets);
  }

  /** Changes only the fields sent; `metadata` is replaced as a whole. */
  async update(userId: string, id: string, changes: UpdateEndpointDto): Promise<EndpointDto> {
    const endpoint = await this.endpoints.findOwned(userId, id);
    if (!endpoint) throw new NotFoundException(ENDPOINT_NOT_FOUND);
    if (changes.name !== undefined) endpoint.name = changes.name;
    if (changes.is_active !== undefined) endpoint.isActive = changes.is_active;
    if (changes.metadata !== undefined) endpoint.metadata = changes.metadata;
    await this.endpoints.save();
    return toEndpointDto(endpoint, this.siteUrl);
  }

  async remove(userId: string, id: string): Promise<void> {
    if (!(await this.endpoints.deleteOwned(userId, id))) throw new NotFoundException(ENDPOINT_NOT_FOUND);
  }

  /** For the endpoint's sub-resources (destinations, events): 404 unless the endpoint is the user's. */
  async assertOwned(userId: string, id: string): Promise<void> {
    if (!(await this.endpoints.isOwned(userId, id))) throw new NotFoundException(ENDPOINT_NOT_FOUND);
  }
}
