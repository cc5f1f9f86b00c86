import { setTimeout as sleep } from 'node:timers/promises';
import { api } from '../support/api-client';
import { answer, HttpsDestination } from '../support/https-destination';
import { freePort } from '../support/service-process';
import { SmtpSink } from '../support/smtp-sink';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  addDestination,
  capture,
  createEndpoint,
  hasStatus,
  waitForEvent,
} from '../support/webhook-fixtures';
import { ledger } from './support/ledger';

describe('reliability: SMTP down when an event dead-letters', () => {
  it('tells the channels at once, and sends the alert once SMTP comes back, each exactly once', async () => {
    const smtpPort = await freePort(); // nothing listens here until the sink starts
    const destination = await HttpsDestination.start(answer(500, 'nope'));
    const chat = await HttpsDestination.start();
    let sut: TestApp | undefined;
    let sink: SmtpSink | undefined;
    try {
      sut = await startTestApp({
        SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
        DELIVERY_RETRY_DELAYS_MS: '100,100,100,100',
      });
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, destination.url);
      const channel = await api(sut.url, 'POST', '/api/notification-channels', {
        token: fixture.user.accessToken,
        body: { type: 'slack', target: `${chat.url}/slack`, events: ['dead_letter'] },
      });
      expect(channel.status).toBe(201);
      const eventId = await capture(fixture);
      await waitForEvent(sut.url, fixture, eventId, hasStatus('dead_letter'), 30_000);
      expect(destination.received).toHaveLength(5);
      // The chat is told while SMTP is still down: the mail's failure does not hold the channels.
      const [told] = await chat.waitForRequests(1, 20_000);
      expect(JSON.parse(told.body.toString('utf8')).text).toContain('1 webhook dead-lettered on');

      await sleep(3000); // the alert job fails against the closed port meanwhile
      sink = await SmtpSink.start(smtpPort);
      const smtpBack = Date.now();
      await sink.waitForMails(1, 40_000);
      const delay = Date.now() - smtpBack;
      await sleep(3000); // a duplicate would show up now
      const forEvent = sink.mails.filter((mail) => mail.text.includes(eventId));
      console.log(`alert mailed ${delay} ms after SMTP returned; mails: ${sink.mails.length}`);
      expect(forEvent).toHaveLength(1);
      expect(sink.mails).toHaveLength(1);
      expect(forEvent[0].to).toEqual([fixture.user.email]);
      expect(chat.received).toHaveLength(1);

      const books = await ledger(sut.env.DATABASE_URL, [eventId]);
      expect(books).toMatchObject({
        acknowledged: 1,
        stored: 1,
        deadLetter: 1,
        missing: [],
        unaccounted: [],
      });
    } finally {
      await sut?.close();
      await sink?.close();
      await destination.close();
      await chat.close();
    }
  }, 90_000);
});
