/**
 * The part of a statement that queues events for the search indexer (SearchIndexer takes `search_queue`'s
 * rows): `ids`, a query, answers the events' ids. The statements that store or route events left without
 * deliveries (the capture's batch, the delivery router's) take it as one of their CTEs, so that the queue
 * is written by the indexer's code alone, in their one statement.
 */
export const queueForSearch = (ids: string): string => `insert into search_queue (event_id) ${ids}`;
