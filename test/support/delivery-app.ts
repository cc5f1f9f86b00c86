import { Client } from 'pg';
import { HttpsDestination } from './https-destination';
import { startTestApp, type TestApp } from './test-app';

/** The app under test, a client of its database, and HTTPS destinations started on demand. */
export interface DeliveryApp {
  sut: TestApp;
  db: Client;
  /** Starts a destination that is closed after the file's tests. */
  server(): Promise<HttpsDestination>;
}

/**
 * Starts the app with `overrides` and connects to its database before the tests of the calling file,
 * and closes both (and every destination started through it) after them.
 */
export function useDeliveryApp(overrides: Record<string, string>): DeliveryApp {
  const servers: HttpsDestination[] = [];
  const app = {
    server: async () => {
      const started = await HttpsDestination.start();
      servers.push(started);
      return started;
    },
  } as DeliveryApp;

  beforeAll(async () => {
    app.sut = await startTestApp(overrides);
    app.db = new Client({ connectionString: app.sut.env.DATABASE_URL });
    await app.db.connect();
  });
  afterAll(async () => {
    await app.db?.end();
    await app.sut?.close();
    await Promise.all(servers.map((started) => started.close()));
  });
  return app;
}
