import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders } from 'node:http';

/**
 * A Server-Sent Events client over one real loopback request: POSTs a JSON body and parses
 * `event:` / `data:` blocks as they arrive. `onEvent` sees each event the moment its block is
 * complete (with `performance.now()`); `close()` drops the connection mid-stream.
 */
export interface SseEvent {
  event: string;
  data: unknown;
  at: number;
}

export interface SseStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** Resolves with every event once the server ends the stream (or the request is dropped). */
  done: Promise<SseEvent[]>;
  close(): void;
}

export function postSse(
  baseUrl: string,
  path: string,
  body: unknown,
  onEvent: (event: SseEvent, stream: { close(): void }) => void = () => {},
  /** More request headers (e.g. `idempotency-key`). */
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const url = new URL(baseUrl);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    let req: ClientRequest | undefined = undefined;
    const close = (): void => void req?.destroy();
    req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path,
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), accept: 'text/event-stream' },
      },
      (res) => {
        let buffer = '';
        const done = new Promise<SseEvent[]>((end) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            let cut: number;
            while ((cut = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, cut);
              buffer = buffer.slice(cut + 2);
              const at = performance.now();
              let event = 'message';
              const data: string[] = [];
              for (const line of block.split('\n')) {
                if (line.startsWith('event: ')) event = line.slice(7);
                else if (line.startsWith('data: ')) data.push(line.slice(6));
              }
              const raw = data.join('\n');
              let parsed: unknown = raw;
              try {
                parsed = JSON.parse(raw);
              } catch {
                // not JSON: kept as text
              }
              const e = { event, data: parsed, at };
              events.push(e);
              onEvent(e, { close });
            }
          });
          res.on('end', () => end(events));
          res.on('close', () => end(events));
        });
        resolve({ status: res.statusCode ?? 0, headers: res.headers, done, close });
      },
    );
    req.on('error', (err) => {
      if (!req?.destroyed) reject(err);
    });
    req.end(payload);
  });
}
