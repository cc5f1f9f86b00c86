/*
 * `routing_queue`: the events a capture stored for forwarding, each with the destinations it chose, until
 * a delivery router makes their deliveries. The capture owns it; both statements that write it are here,
 * each the part of a larger statement (the capture's batch, the router's), so that the queue and what
 * they store or make with it change together.
 */

/** The CTE body that queues events for routing: `routes`, a query, answers `id, destination_ids`. */
export const queueForRouting = (routes: string): string =>
  `insert into routing_queue (event_id, destination_ids) select id, destination_ids from ${routes}`;

/**
 * The CTE body that takes up to `?` (its one binding) queued events, answering `event_id, destination_ids`:
 * by their ctid (a TID scan, the table has no index), SKIP LOCKED, so routers side by side take different
 * rows; deleted in the statement that routes them.
 */
export const TAKE_FOR_ROUTING = `
    delete from routing_queue
    where ctid = any(array(select ctid from routing_queue limit ? for update skip locked))
    returning event_id, destination_ids`;
