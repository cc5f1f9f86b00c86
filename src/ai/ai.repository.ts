import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { withoutUrlPassword } from '../common/url-password';
import type { AiAnswer, AiDelivery, AiEvent, AiProviderName } from './ai.types';

/** Every query of the AI feature, scoped by owner. */
@Injectable()
export class AiRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex() {
    return this.em.getKnex();
  }

  /** The endpoint's event (null when the endpoint has no such event); the caller's access is checked before. */
  async findEvent(endpointId: string, eventId: string): Promise<AiEvent | null> {
    const { rows } = await this.knex.raw(
      `select e.method, e.headers, e.query, e.body_text, e.body_bytes, e.received_at
       from events e where e.id = ? and e.endpoint_id = ?`,
      [eventId, endpointId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      method: row.method,
      headers: row.headers,
      query: row.query,
      body: row.body_bytes ?? Buffer.from(row.body_text ?? '', 'utf8'),
      receivedAt: new Date(row.received_at),
    };
  }

  /**
   * The event's deliveries, each destination URL without its password: a URL's user information is sent
   * as Basic credentials, which neither Gemini's prompt nor a cached answer may hold.
   */
  async deliveries(eventId: string): Promise<AiDelivery[]> {
    const { rows } = await this.knex.raw(
      `select destination_url, status, response_body, attempts from deliveries where event_id = ? order by created_at`,
      [eventId],
    );
    return rows.map(
      (row: {
        destination_url: string;
        status: AiDelivery['status'];
        response_body: string | null;
        attempts: AiDelivery['attempts'];
      }) => ({
        destinationUrl: withoutUrlPassword(row.destination_url),
        status: row.status,
        responseBody: row.response_body,
        attempts: row.attempts,
      }),
    );
  }

  async cached(eventId: string, operation: string, parameters: string): Promise<AiAnswer | null> {
    const { rows } = await this.knex.raw(
      `select provider, result from ai_results where event_id = ? and operation = ? and parameters = ?`,
      [eventId, operation, parameters],
    );
    return rows[0] ? { text: rows[0].result, provider: rows[0].provider as AiProviderName } : null;
  }

  /**
   * Keeps an answer. A diagnosis first drops the event's earlier ones: made before its latest attempts,
   * they read attempts that are no longer the whole story, and are never served again.
   */
  async store(eventId: string, operation: string, parameters: string, answer: AiAnswer): Promise<void> {
    if (operation === 'diagnose')
      await this.knex.raw(
        `delete from ai_results where event_id = ? and operation = 'diagnose' and parameters <> ?`,
        [eventId, parameters],
      );
    await this.knex.raw(
      `insert into ai_results (event_id, operation, parameters, provider, result) values (?, ?, ?, ?, ?)
       on conflict (event_id, operation, parameters) do update set provider = excluded.provider, result = excluded.result, created_at = now()`,
      [eventId, operation, parameters, answer.provider, answer.text],
    );
  }
}
