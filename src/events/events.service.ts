import { Injectable, NotFoundException } from '@nestjs/common';
import { EndpointsService } from '../endpoints/endpoints.service';
import type { DeliveryDto, EventListResponseDto, EventWithDeliveriesDto } from './dto/event.dto';
import { eventFiltersOf, type ListEventsQuery } from './dto/list-events.query';
import { toDeliveryDto, toEventDto } from './event.presenter';
import { EventsRepository } from './events.repository';

const EVENT_NOT_FOUND = 'event not found';

/** Captured events of a user's endpoint. */
@Injectable()
export class EventsService {
  constructor(
    private readonly events: EventsRepository,
    private readonly endpoints: EndpointsService,
  ) {}

  /** Newest first; `pages` is ceil(total / limit), 0 when nothing matches; a page past the end is empty. */
  async list(userId: string, endpointId: string, query: ListEventsQuery): Promise<EventListResponseDto> {
    await this.endpoints.assertOwned(userId, endpointId);
    const { rows, total, capped } = await this.events.listPage(
      endpointId,
      eventFiltersOf(query),
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

  async get(userId: string, endpointId: string, eventId: string): Promise<EventWithDeliveriesDto> {
    await this.endpoints.assertOwned(userId, endpointId);
    const event = await this.events.findInEndpoint(endpointId, eventId);
    if (!event) throw new NotFoundException(EVENT_NOT_FOUND);
    const deliveries = await this.events.listDeliveries(eventId);
    return { ...toEventDto(event), deliveries: deliveries.map(toDeliveryDto) };
  }

  async listDeliveries(userId: string, endpointId: string, eventId: string): Promise<DeliveryDto[]> {
    await this.endpoints.assertOwned(userId, endpointId);
    if (!(await this.events.existsInEndpoint(endpointId, eventId)))
      throw new NotFoundException(EVENT_NOT_FOUND);
    return (await this.events.listDeliveries(eventId)).map(toDeliveryDto);
  }
}
