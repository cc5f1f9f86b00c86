import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GeminiRequest {
  url: string;
  prompt: string;
}

/** One queued answer: a text, an error status, or no answer at all (the request is held until close). */
export type FakeGeminiAnswer = { text: string } | { status: number } | 'hang';

/** Answers `generateContent` in Gemini's JSON shape on 127.0.0.1, with queued texts or errors, or not at all. */
export class FakeGemini {
  readonly requests: GeminiRequest[] = [];
  private readonly answers: FakeGeminiAnswer[] = [];
  private server!: Server;

  static async start(): Promise<FakeGemini> {
    const gemini = new FakeGemini();
    gemini.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        const prompt = (body.contents ?? [])
          .flatMap((content: { parts: { text: string }[] }) => content.parts.map((part) => part.text))
          .join('\n');
        gemini.requests.push({ url: request.url ?? '', prompt });
        const answer = gemini.answers.shift() ?? { status: 500 };
        if (answer === 'hang') return;
        response.setHeader('content-type', 'application/json');
        if ('status' in answer) {
          response.statusCode = answer.status;
          response.end(
            JSON.stringify({ error: { code: answer.status, message: 'fake failure', status: 'INTERNAL' } }),
          );
          return;
        }
        response.end(
          JSON.stringify({
            candidates: [
              { content: { parts: [{ text: answer.text }], role: 'model' }, finishReason: 'STOP', index: 0 },
            ],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => gemini.server.listen(0, '127.0.0.1', resolve));
    return gemini;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  answerWith(...answers: FakeGeminiAnswer[]): void {
    this.answers.push(...answers);
  }

  close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    return closed;
  }
}
