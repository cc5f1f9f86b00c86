/** PostgreSQL's code for a transaction it ended to break a deadlock. */
const DEADLOCK_DETECTED = '40P01';
/** A transaction is tried again this many times when PostgreSQL ends it to break a deadlock. */
const DEADLOCK_RETRIES = 3;

/**
 * Runs a transaction, and again (up to DEADLOCK_RETRIES times) when PostgreSQL ended it to break a
 * deadlock: the other transaction went on, so the next try finds its locks released.
 */
export async function retryingDeadlocks<T>(transaction: () => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await transaction();
    } catch (error) {
      if ((error as { code?: string }).code !== DEADLOCK_DETECTED || retry >= DEADLOCK_RETRIES) throw error;
    }
  }
}
