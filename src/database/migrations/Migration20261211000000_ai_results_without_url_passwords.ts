import { Migration } from '@mikro-orm/migrations';

/**
 * Drops the cached AI answers that quote a URL with a password (a destination's Basic credentials, which
 * diagnoses quoted until the repository left them out): the next request makes them again without it.
 */
export class Migration20261211000000_ai_results_without_url_passwords extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `delete from "ai_results" where "result" ~* 'https?://[^/?#:[:space:]]*:[^/?#@[:space:]]*@';`,
    );
  }

  override async down(): Promise<void> {
    // The answers dropped are made again on demand: nothing to restore.
  }
}
