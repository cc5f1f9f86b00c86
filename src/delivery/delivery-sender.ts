import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import axios, { type AxiosInstance, type AxiosResponse } from 'axios';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import type { Environment } from '../config/environment';

/** The part of a destination's response body that is kept. */
export const RESPONSE_BODY_LIMIT_BYTES = 1024;

/** Headers that describe one hop, never forwarded (RFC 9110 §7.6.1), and our own, which we set. */
const DROPPED_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'te',
  'upgrade',
  'trailer',
]);
const isDropped = (name: string) =>
  DROPPED_HEADERS.has(name) || name.startsWith('proxy-') || name.startsWith('hooktrail-');

export interface OutgoingRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

export interface AttemptOutcome {
  responseCode: number | null;
  responseBody: string | null;
  durationMs: number;
  error: string | null;
}

export const HTTP_CLIENT = Symbol('HTTP_CLIENT');

/** axios with keep-alive agents; unless private networks are allowed, the agents refuse to dial them. */
export function createHttpClient(allowPrivateNetworks: boolean): AxiosInstance {
  // As many idle sockets kept as may be busy: a burst of the worker's concurrent attempts would otherwise
  // close the surplus after each wave and pay a new TLS handshake for each in the next.
  const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 256 };
  const filter = { allowPrivateIPAddress: false, allowMetaIPAddress: false };
  return axios.create({
    httpAgent: allowPrivateNetworks
      ? new HttpAgent(agentOptions)
      : new RequestFilteringHttpAgent({ ...agentOptions, ...filter }),
    httpsAgent: allowPrivateNetworks
      ? new HttpsAgent(agentOptions)
      : new RequestFilteringHttpsAgent({ ...agentOptions, ...filter }),
    maxRedirects: 0,
    responseType: 'stream',
    decompress: true,
    validateStatus: () => true,
    transformRequest: [(data: unknown) => data],
    proxy: false,
  });
}

/** The original URL's query string appended to the destination URL. */
export function destinationUrlWithQuery(destinationUrl: string, query: string): string {
  if (!query) return destinationUrl;
  const url = new URL(destinationUrl);
  url.search = url.search ? `${url.search.slice(1)}&${query}` : query;
  return url.toString();
}

export function forwardedHeaders(
  original: Record<string, string | string[]>,
): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(original).filter(([name]) => !isDropped(name.toLowerCase())));
}

function describeError(error: unknown, timeoutMs: number): string {
  const { code, message } = error as { code?: string; message?: string };
  if (code === 'ECONNABORTED' || code === 'ERR_CANCELED' || code === 'ETIMEDOUT')
    return `timed out after ${timeoutMs} ms`;
  // request-filtering-agent refuses private ranges as "private" and 0.0.0.0 / :: as "meta" addresses
  if (message && /is not allowed\. Because, It is (private|meta) IP address/.test(message)) {
    return `refused: the destination resolves to a private or reserved address (${message.split('(')[0].replace('DNS lookup ', '').trim()}); set DELIVERY_ALLOW_PRIVATE_NETWORKS=true to allow it`;
  }
  return code ? `${code}: ${message ?? ''}`.trim() : (message ?? 'request failed');
}

/** Reads at most `limit` bytes of a response stream before `deadline`, then lets go of the stream. */
async function readHead(stream: Readable, limit: number, deadline: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      const finish = () => {
        clearTimeout(timer);
        resolve();
      };
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= limit) finish();
      });
      stream.once('end', finish);
      stream.once('error', finish);
    });
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

/** Sends one attempt. Never throws: every failure becomes an outcome with its error. */
@Injectable()
export class DeliverySender implements OnModuleDestroy {
  private readonly timeoutMs: number;

  constructor(
    @Inject(HTTP_CLIENT) private readonly http: AxiosInstance,
    config: ConfigService<Environment, true>,
  ) {
    this.timeoutMs = config.get('DELIVERY_TIMEOUT_MS', { infer: true });
  }

  async send(request: OutgoingRequest): Promise<AttemptOutcome> {
    const started = Date.now();
    const deadline = started + this.timeoutMs;
    let response: AxiosResponse<Readable>;
    try {
      response = await this.http.request<Readable>({
        method: request.method,
        url: request.url,
        headers: request.headers,
        data: request.body.length > 0 ? request.body : undefined,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      return {
        responseCode: null,
        responseBody: null,
        durationMs: Date.now() - started,
        error: describeError(error, this.timeoutMs),
      };
    }
    const head = await readHead(response.data, RESPONSE_BODY_LIMIT_BYTES, deadline);
    const ok = response.status >= 200 && response.status < 300;
    return {
      responseCode: response.status,
      responseBody: head.toString('utf8').replaceAll('\u0000', '\uFFFD'), // PostgreSQL text holds no NUL
      durationMs: Date.now() - started,
      error: ok
        ? null
        : response.status >= 300 && response.status < 400
          ? 'redirects are not followed'
          : null,
    };
  }

  onModuleDestroy(): void {
    for (const agent of [this.http.defaults.httpAgent, this.http.defaults.httpsAgent] as HttpAgent[])
      agent?.destroy();
  }
}
