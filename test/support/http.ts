import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON (`undefined` when it is not JSON). */
  json: unknown;
}

export interface HttpOptions {
  /** Sent as JSON (with content-type application/json) unless `raw` is given. */
  body?: unknown;
  /** Sent verbatim. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

/** One request over a fresh loopback connection, with full control of headers (Host included). */
export function http(baseUrl: string, method: string, path: string, options: HttpOptions = {}): Promise<HttpResponse> {
  const url = new URL(baseUrl);
  const headers: Record<string, string> = { ...options.headers };
  let payload: string | Buffer | undefined = options.raw;
  if (payload === undefined && options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
