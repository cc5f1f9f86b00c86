import { EntityManager } from '@mikro-orm/postgresql';
import {
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { PeriodicTask } from '../common/periodic-task';

const SWEEP_INTERVAL_MS = 60_000;
/** Keys deleted per statement, so that one sweep never holds many row locks at once. */
const SWEEP_BATCH = 5000;

/**
 * Deletes the dedup keys whose window has passed (a worker's task). A capture takes over an expired key by
 * itself (CaptureRepository), so this only keeps the table to the keys that still hold.
 */
@Injectable()
export class DedupKeysSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DedupKeysSweeper.name);
  private readonly sweeps = new PeriodicTask(
    () => this.sweep(),
    SWEEP_INTERVAL_MS,
    (error) => this.logger.warn(`expired dedup keys not deleted yet: ${error.message}`),
  );

  constructor(private readonly em: EntityManager) {}

  onApplicationBootstrap(): void {
    this.sweeps.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.sweeps.stop();
  }

  private async sweep(): Promise<void> {
    let deleted: number;
    do {
      const result = await this.em.getKnex().raw(
        `delete from dedup_keys where ctid in (
           select ctid from dedup_keys where expires_at <= now() limit ? for update skip locked)`,
        [SWEEP_BATCH],
      );
      deleted = result.rowCount as number;
    } while (deleted === SWEEP_BATCH);
  }
}

/** What a worker runs for ingest rules: the sweeper of expired dedup keys. */
@Module({ providers: [DedupKeysSweeper] })
export class IngestWorkerModule {}
