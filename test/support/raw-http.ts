import { request as httpRequest } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A request over node:http, so that method, headers and body bytes are exactly what the test says. */
export function send(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string | string[]>; body?: Buffer | string; chunked?: boolean } = {},
): Promise<RawResponse> {
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const headers: Record<string, string | string[]> = { ...options.headers };
  if (body !== undefined && !options.chunked) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = {};
        try {
          json = text ? JSON.parse(text) : {};
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (body !== undefined && options.chunked) {
      const middle = Math.floor(body.length / 2);
      req.write(body.subarray(0, middle));
      req.write(body.subarray(middle));
    } else if (body !== undefined) {
      req.write(body);
    }
    req.end();
  });
}
