import { Inject, Injectable } from '@nestjs/common';
import { captureRulesOf, NO_RULES, type CaptureRules } from '../../ingest/capture-rules';
import type { SecretBox } from '../../secrets/secret-box';
import { SECRET_BOX } from '../../secrets/secrets.module';
import { CaptureRepository, type RulesRow } from './capture.repository';

/** Endpoints whose rules a process keeps at most (the oldest read is dropped first; it is read again if needed). */
export const CACHED_RULES_MAX = 10_000;

/**
 * The ingest rules of the endpoints this process has captured for, opened and ready to judge a capture in
 * microseconds. An endpoint it has not read is judged as one that never had rules (version 0); the capture
 * statement stores nothing judged by another version than the endpoint's (CaptureRepository), and the
 * capture is judged again after `reload`. So rules are read once per process and change, on the first
 * capture that needs them, and a process never applies rules that have changed: no pub/sub message can be
 * lost or late, and an unknown token never costs more than the one statement it always cost.
 */
@Injectable()
export class CaptureRulesCache {
  private readonly rules = new Map<string, CaptureRules>();
  private readonly reading = new Map<string, Promise<CaptureRules>>();

  constructor(
    private readonly repository: CaptureRepository,
    @Inject(SECRET_BOX) private readonly secrets: SecretBox,
  ) {}

  /** The rules last read for this token; NO_RULES when it was never read. */
  get(token: string): CaptureRules {
    return this.rules.get(token) ?? NO_RULES;
  }

  /** Reads the token's rules again; captures that find them stale at once share one read. */
  reload(token: string): Promise<CaptureRules> {
    let reading = this.reading.get(token);
    if (reading === undefined) {
      reading = this.read(token).finally(() => this.reading.delete(token));
      this.reading.set(token, reading);
    }
    return reading;
  }

  private async read(token: string): Promise<CaptureRules> {
    const row = await this.repository.loadRules(token);
    if (row === undefined) {
      this.rules.delete(token);
      return NO_RULES;
    }
    const rules = captureRulesOf(this.opened(row));
    this.rules.delete(token);
    if (this.rules.size >= CACHED_RULES_MAX) this.rules.delete(this.rules.keys().next().value as string);
    this.rules.set(token, rules);
    return rules;
  }

  private opened(row: RulesRow) {
    return {
      version: row.rules_version,
      verification: row.verification,
      verificationSecret:
        row.verification_secret === null ? null : this.secrets.open(row.verification_secret),
      inboundAuth: row.inbound_auth,
      inboundAuthSecret: row.inbound_auth_secret === null ? null : this.secrets.open(row.inbound_auth_secret),
      dedup: row.dedup,
      filters: row.filters.map(({ destination_id, filter }) => ({
        destinationId: destination_id,
        rule: filter,
      })),
    };
  }
}
