/** The queue of FIFO pumps: a job runs one FIFO destination's deliveries, one after the other. */
export const FIFO_PUMP_QUEUE = 'delivery-fifo';

export interface FifoPumpJob {
  destinationId: string;
}
