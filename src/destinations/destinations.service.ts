import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { isPrivateHostname } from '../common/network/private-address';
import type { Environment } from '../config/environment';
import type { Destination } from './destination.entity';
import { EndpointsService } from '../endpoints/endpoints.service';
import { DestinationBacklogs } from '../delivery/destination-backlogs.service';
import { toDestinationDtos } from './destination.presenter';
import { DestinationsRepository } from './destinations.repository';
import type { CreateDestinationDto } from './dto/create-destination.dto';
import type { DestinationDto } from './dto/destination.dto';
import type { UpdateDestinationDto } from './dto/update-destination.dto';

const DESTINATION_NOT_FOUND = 'destination not found';

/** Destinations of a user's endpoint. */
@Injectable()
export class DestinationsService {
  private readonly allowPrivateNetworks: boolean;

  constructor(
    private readonly destinations: DestinationsRepository,
    private readonly endpoints: EndpointsService,
    private readonly backlogs: DestinationBacklogs,
    config: ConfigService<Environment, true>,
  ) {
    this.allowPrivateNetworks = config.get('DELIVERY_ALLOW_PRIVATE_NETWORKS', { infer: true });
  }

  async list(userId: string, endpointId: string): Promise<DestinationDto[]> {
    await this.endpoints.assertOwned(userId, endpointId);
    return toDestinationDtos(await this.destinations.listForEndpoint(endpointId), this.backlogs);
  }

  async get(userId: string, endpointId: string, id: string): Promise<DestinationDto> {
    await this.endpoints.assertOwned(userId, endpointId);
    return this.present(await this.findInEndpoint(endpointId, id));
  }

  async create(userId: string, endpointId: string, input: CreateDestinationDto): Promise<DestinationDto> {
    await this.endpoints.assertOwned(userId, endpointId);
    this.assertPublicHost(input.url);
    return this.present(await this.destinations.create(endpointId, input.url, input.secret ?? null));
  }

  /** Changes only the fields sent. */
  async update(
    userId: string,
    endpointId: string,
    id: string,
    changes: UpdateDestinationDto,
  ): Promise<DestinationDto> {
    await this.endpoints.assertOwned(userId, endpointId);
    const destination = await this.findInEndpoint(endpointId, id);
    if (changes.url !== undefined) {
      this.assertPublicHost(changes.url);
      destination.url = changes.url;
    }
    if (changes.secret !== undefined) destination.secret = changes.secret;
    if (changes.is_active !== undefined) destination.isActive = changes.is_active;
    await this.destinations.save();
    return this.present(destination);
  }

  async remove(userId: string, endpointId: string, id: string): Promise<void> {
    await this.endpoints.assertOwned(userId, endpointId);
    if (!(await this.destinations.deleteInEndpoint(endpointId, id)))
      throw new NotFoundException(DESTINATION_NOT_FOUND);
  }

  private async findInEndpoint(endpointId: string, id: string): Promise<Destination> {
    const destination = await this.destinations.findInEndpoint(endpointId, id);
    if (!destination) throw new NotFoundException(DESTINATION_NOT_FOUND);
    return destination;
  }

  private async present(destination: Destination): Promise<DestinationDto> {
    const [dto] = await toDestinationDtos([destination], this.backlogs);
    return dto;
  }

  /**
   * A literal loopback, private, link-local or reserved host (or `localhost`) is refused unless
   * DELIVERY_ALLOW_PRIVATE_NETWORKS=true. Names are checked again after DNS by the delivery engine.
   */
  private assertPublicHost(url: string): void {
    if (this.allowPrivateNetworks) return;
    const { hostname } = new URL(url);
    if (isPrivateHostname(hostname)) {
      throw new BadRequestException(
        `url must not point to a loopback, private, link-local or reserved address (host ${hostname})`,
      );
    }
  }
}
