import { Injectable, NotFoundException } from '@nestjs/common';
import type { DeliveryDto, EventListResponseDto, EventWithDeliveriesDto } from './dto/event.dto';
import { eventFiltersOf, type ListEventsQuery } from './dto/list-events.query';
import { toDeliveryDto, toEventDto } from './event.presenter';
import { type EventRow, EventsRepository } from './events.repository';
import type { EventRoutingResponseDto, FilterVerdictDto } from './dto/routing.dto';
import { evaluateFilter, type FilterRule } from '../ingest/filter';
import { EventRouting, filterSubjectOf } from '../ingest/routing';

const EVENT_NOT_FOUND = 'event not found';

/** Captured events of a user's endpoint. */
@Injectable()
export class EventsService {
  constructor(private readonly events: EventsRepository) {}

  /** Newest first; `pages` is ceil(total / limit), 0 when nothing matches; a page past the end is empty. */
  async list(endpointId: string, query: ListEventsQuery): Promise<EventListResponseDto> {
    const { rows, total, capped } = await this.events.listPage(
      endpointId,
      { ...eventFiltersOf(query), verification: query.verification },
      query.page,
      query.limit,
    );
    return {
      events: rows.map(toEventDto),
      pagination: {
        page: query.page,
        limit: query.limit,
        total,
        pages: Math.ceil(total / query.limit),
        ...(capped ? { total_capped: true } : {}),
      },
    };
  }

  async get(endpointId: string, eventId: string): Promise<EventWithDeliveriesDto> {
    const event = await this.findOwned(endpointId, eventId);
    const deliveries = await this.events.listDeliveries(eventId);
    return { ...toEventDto(event), deliveries: deliveries.map(toDeliveryDto) };
  }

  async listDeliveries(endpointId: string, eventId: string): Promise<DeliveryDto[]> {
    if (!(await this.events.existsInEndpoint(endpointId, eventId)))
      throw new NotFoundException(EVENT_NOT_FOUND);
    return (await this.events.listDeliveries(eventId)).map(toDeliveryDto);
  }

  async routing(endpointId: string, eventId: string): Promise<EventRoutingResponseDto> {
    const [event, destinations, enforced] = await Promise.all([
      this.findOwned(endpointId, eventId),
      this.events.listRoutes(endpointId),
      this.events.enforcesVerification(endpointId),
    ]);
    const routing = new EventRouting(event, enforced);
    return {
      destinations: destinations.map((destination) => {
        const reason = routing.reasonNotReceived(destination);
        return { id: destination.id, url: destination.url, receives: reason === null, reason };
      }),
    };
  }

  async testFilter(
    endpointId: string,
    eventId: string,
    filter: FilterRule | null,
  ): Promise<FilterVerdictDto> {
    const event = await this.findOwned(endpointId, eventId);
    return filter === null ? { matches: true, reason: null } : evaluateFilter(filter, filterSubjectOf(event));
  }

  private async findOwned(endpointId: string, eventId: string): Promise<EventRow> {
    const event = await this.events.findInEndpoint(endpointId, eventId);
    if (!event) throw new NotFoundException(EVENT_NOT_FOUND);
    return event;
  }
}
