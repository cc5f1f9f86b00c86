import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GeminiRequest {
  url: string;
  prompt: string;
}

/** Answers `generateContent` in Gemini's JSON shape on 127.0.0.1, with queued texts or errors. */
export class FakeGemini {
  readonly requests: GeminiRequest[] = [];
  private readonly answers: ({ text: string } | { status: number })[] = [];
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

  answerWith(...answers: ({ text: string } | { status: number })[]): void {
    this.answers.push(...answers);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
