import { Inject, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Grant } from '../access/access.repository';
import { assertPublicHost } from '../common/network/private-address';
import type { Environment } from '../config/environment';
import type { Destination, FlowControl } from '../model/destination.entity';
import { DestinationBacklogs } from '../delivery/destination-backlogs.service';
import { HeldDeliveries } from '../delivery/held-deliveries.service';
import type { SecretBox } from '../secrets/secret-box';
import { SECRET_BOX } from '../secrets/secrets.module';
import { type SecretReader, toDestinationDtos } from './destination.presenter';
import { DestinationsRepository } from './destinations.repository';
import type { CreateDestinationDto } from './dto/create-destination.dto';
import type { DestinationDto } from './dto/destination.dto';
import type { FlowControlFieldsDto } from './dto/flow-control-fields.dto';
import type { UpdateDestinationDto } from './dto/update-destination.dto';
import { afterCommit } from '../database/write-transaction';

const DESTINATION_NOT_FOUND = 'destination not found';

/** The flow-control fields a request sent, as entity properties. */
function flowControlChanges(input: FlowControlFieldsDto): Partial<FlowControl> {
  const changes: Partial<FlowControl> = {};
  if (input.rate_limit !== undefined) changes.rateLimit = input.rate_limit;
  if (input.rate_limit_period !== undefined) changes.rateLimitPeriod = input.rate_limit_period;
  if (input.max_in_flight !== undefined) changes.maxInFlight = input.max_in_flight;
  if (input.paused !== undefined) changes.paused = input.paused;
  if (input.ordering !== undefined) changes.ordering = input.ordering;
  return changes;
}

/** Destinations of a user's endpoint. */
@Injectable()
export class DestinationsService {
  private readonly logger = new Logger(DestinationsService.name);
  private readonly allowPrivateNetworks: boolean;

  constructor(
    private readonly destinations: DestinationsRepository,
    private readonly backlogs: DestinationBacklogs,
    private readonly held: HeldDeliveries,
    @Inject(SECRET_BOX) private readonly secrets: SecretBox,
    config: ConfigService<Environment, true>,
  ) {
    this.allowPrivateNetworks = config.get('DELIVERY_ALLOW_PRIVATE_NETWORKS', { infer: true });
  }

  /** Each method answers in the shape `grant` may see: secrets shown only when it may write them. */
  async list(grant: Grant, endpointId: string): Promise<DestinationDto[]> {
    return toDestinationDtos(
      await this.destinations.listForEndpoint(endpointId),
      this.backlogs,
      this.reader(grant),
    );
  }

  async get(grant: Grant, endpointId: string, id: string): Promise<DestinationDto> {
    return this.present(grant, await this.findInEndpoint(endpointId, id));
  }

  async create(grant: Grant, endpointId: string, input: CreateDestinationDto): Promise<DestinationDto> {
    assertPublicHost(input.url, 'url', this.allowPrivateNetworks);
    return this.present(
      grant,
      await this.destinations.create(endpointId, {
        url: input.url,
        sealedSecret: this.sealed(input.secret),
        filter: input.filter ?? null,
        autoPauseAfter: input.auto_pause_after ?? null,
        ...flowControlChanges(input),
      }),
    );
  }

  /** Changes only the fields sent. */
  async update(
    grant: Grant,
    endpointId: string,
    id: string,
    changes: UpdateDestinationDto,
  ): Promise<DestinationDto> {
    const destination = await this.findInEndpoint(endpointId, id);
    if (changes.url !== undefined) {
      assertPublicHost(changes.url, 'url', this.allowPrivateNetworks);
      destination.url = changes.url;
    }
    if (changes.secret !== undefined) destination.sealedSecret = this.sealed(changes.secret);
    if (changes.is_active !== undefined) destination.isActive = changes.is_active;
    if (changes.filter !== undefined) destination.filter = changes.filter;
    if (changes.auto_pause_after !== undefined) destination.autoPauseAfter = changes.auto_pause_after;
    const { paused, ordering, rateLimit, rateLimitPeriod } = destination;
    const was = { paused, ordering, rateLimit, rateLimitPeriod };
    Object.assign(destination, flowControlChanges(changes));
    // Paused by hand: no reason to show. Resumed: its failures start counting again from none.
    if (changes.paused !== undefined) destination.pausedReason = null;
    if (was.paused && !destination.paused) destination.consecutiveFailures = 0;
    await this.destinations.save();
    // In the background: on resume, or a change of ordering, the waiting backlog is released (to the FIFO
    // pump, or enqueued; the sweeper would find it too, later). On a change of rate limit (with a resume or
    // not), the deliveries deferred to slots of the old one come back for a slot of the new one.
    if (destination.paused) return this.present(grant, destination);
    const rateChanged =
      destination.ordering === 'none' &&
      (destination.rateLimit !== was.rateLimit || destination.rateLimitPeriod !== was.rateLimitPeriod);
    if (was.paused || destination.ordering !== was.ordering)
      await this.inBackground(destination, () =>
        this.held
          .release(destination.id, destination.ordering)
          .then((released) => (rateChanged ? this.held.repace(destination.id) : released)),
      );
    else if (rateChanged) await this.inBackground(destination, () => this.held.repace(destination.id));
    return this.present(grant, destination);
  }

  async remove(endpointId: string, id: string): Promise<void> {
    if (!(await this.destinations.deleteInEndpoint(endpointId, id)))
      throw new NotFoundException(DESTINATION_NOT_FOUND);
  }

  /**
   * Starts `work` once the change has committed: before, it would read the destination as it was, on the
   * connection of a transaction about to end.
   */
  private async inBackground(destination: Destination, work: () => Promise<number>): Promise<void> {
    await afterCommit(async () => {
      work().catch((error: Error) =>
        this.logger.warn(
          { destinationId: destination.id, err: error },
          'waiting deliveries not moved on yet',
        ),
      );
    });
  }

  private sealed(secret: string | null | undefined): string | null {
    return secret == null ? null : this.secrets.seal(secret);
  }

  private async findInEndpoint(endpointId: string, id: string): Promise<Destination> {
    const destination = await this.destinations.findInEndpoint(endpointId, id);
    if (!destination) throw new NotFoundException(DESTINATION_NOT_FOUND);
    return destination;
  }

  private reader(grant: Grant): SecretReader {
    return { secrets: this.secrets, mayWrite: grant.mayWrite };
  }

  private async present(grant: Grant, destination: Destination): Promise<DestinationDto> {
    const [dto] = await toDestinationDtos([destination], this.backlogs, this.reader(grant));
    return dto;
  }
}
