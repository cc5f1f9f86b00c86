/** The typed job catalog of dead-letter alerts. */
export const ALERT_QUEUE = 'dead-letter-alerts';

export interface AlertJob {
  endpointId: string;
}

/** At most one alert email per endpoint in this window; later dead letters go out as one digest. */
export const ALERT_WINDOW_MS = 10 * 60 * 1000;
