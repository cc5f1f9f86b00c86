import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** The raw message with quoted-printable soft line breaks and escapes undone (good enough to search). */
  text: string;
}

function decodeQuotedPrintable(raw: string): string {
  // Runs of escaped bytes are decoded together: a character of several UTF-8 bytes is one escape each.
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/(?:=[0-9A-F]{2})+/g, (run) => Buffer.from(run.replaceAll('=', ''), 'hex').toString('utf8'));
}

/**
 * A real SMTP server (the `smtp-server` package) on 127.0.0.1 that keeps every message it accepts. With
 * `answerAfterMs`, a slow one: it takes each message in, then answers (and keeps it) only that much later.
 */
export class SmtpSink {
  /** The messages accepted: answered with 250. */
  readonly mails: ReceivedMail[] = [];
  /** How many messages came in, answered or not yet. */
  received = 0;
  private server!: SMTPServer;

  private constructor(private readonly answerAfterMs: number) {}

  static async start(port = 0, { answerAfterMs = 0 } = {}): Promise<SmtpSink> {
    const sink = new SmtpSink(answerAfterMs);
    await sink.listen(port);
    return sink;
  }

  get port(): number {
    return (this.server.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async waitForMails(count: number, timeoutMs = 20_000): Promise<ReceivedMail[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.mails.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} mails, got ${this.mails.length}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return this.mails;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private listen(port: number): Promise<void> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          this.received += 1;
          const raw = Buffer.concat(chunks).toString('utf8');
          const mail = {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((recipient) => recipient.address),
            raw,
            text: decodeQuotedPrintable(raw),
          };
          setTimeout(() => {
            this.mails.push(mail);
            callback();
          }, this.answerAfterMs);
        });
      },
    });
    return new Promise((resolve) => this.server.listen(port, '127.0.0.1', () => resolve()));
  }
}
