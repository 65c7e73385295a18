import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OpenAI-compatible embeddings endpoint on 127.0.0.1 (port 0): `POST /v1/embeddings`
 * answers `{object: 'list', data: [{object: 'embedding', index, embedding}], model, usage}`
 * with DETERMINISTIC vectors (`conceptVector`): each word is folded to lower case, mapped to
 * its concept by a small synonym table (car / automobile / vehicle ...), and hashed into one
 * of `dims` dimensions. So a paraphrase that shares no word with a row but shares its concepts
 * has a vector close to the row's, while BM25 sees nothing in common.
 *
 * Script: `failNext(n, status)` answers the next n requests with `status` (429, 500...);
 * `hold()` keeps answers back until `release()` (all) or `releaseOne()` (the oldest);
 * `waitForRequests(n)` resolves once n requests arrived; `texts` holds every text embedded.
 */
export interface EmbeddingsStub {
  baseURL: string;
  /** Requests received (answered or not). */
  requests: number;
  /** Requests answered with a vector list. */
  answered: number;
  /** Every input text of every answered request, in order. */
  texts: string[];
  failNext(n: number, status?: number): void;
  /** Holds every answer from now on, or only those of requests whose inputs `match`. */
  hold(match?: (texts: readonly string[]) => boolean): void;
  release(): void;
  releaseOne(): void;
  waitForRequests(n: number): Promise<void>;
  close(): Promise<void>;
}

export const STUB_DIMS = 1024;

/** Words that mean the same concept (the first is the concept's name). */
export const SYNONYMS: readonly (readonly string[])[] = [
  ['car', 'automobile', 'vehicle', 'sedan', 'cars', 'automobiles'],
  ['doctor', 'physician', 'medic', 'doctors', 'physicians'],
  ['parked', 'parking', 'park', 'left'],
  ['station', 'terminal', 'depot'],
  ['dog', 'puppy', 'canine', 'hound'],
  ['happy', 'glad', 'joyful', 'cheerful'],
  ['buy', 'purchase', 'bought', 'purchased'],
  ['house', 'home', 'residence', 'dwelling'],
  ['allergy', 'allergic', 'allergies', 'intolerance'],
  ['peanut', 'peanuts', 'groundnut', 'groundnuts'],
];

const CONCEPT = new Map<string, string>(SYNONYMS.flatMap((group) => group.map((w) => [w, group[0]!] as const)));
const STOP = new Set(['the', 'a', 'an', 'is', 'are', 'my', 'i', 'to', 'of', 'where', 'what', 'did', 'do', 'near', 'at', 'in', 'on', 'me', 'am', 'was', 'which', 'for', 'with']);

function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export function conceptVector(text: string, dims = STUB_DIMS): number[] {
  const v: number[] = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOP.has(word)) continue;
    v[fnv(CONCEPT.get(word) ?? word) % dims]! += 1;
  }
  // Never the zero vector (an empty or all-stop-word text): one fixed dimension.
  if (!v.some((x) => x !== 0)) v[dims - 1] = 1;
  return v;
}

export async function startEmbeddingsStub(options: { dims?: number } = {}): Promise<EmbeddingsStub> {
  const dims = options.dims ?? STUB_DIMS;
  let failures: { left: number; status: number } = { left: 0, status: 429 };
  let held: Array<() => void> | undefined;
  let holdOnly: ((texts: readonly string[]) => boolean) | undefined;
  const waiters = new Set<{ n: number; resolve: () => void }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      stub.requests++;
      for (const w of [...waiters]) if (stub.requests >= w.n) {
        waiters.delete(w);
        w.resolve();
      }
      const answer = () => {
        if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
          return;
        }
        if (failures.left > 0) {
          failures.left--;
          res.writeHead(failures.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `scripted ${failures.status}`, type: 'stub' } }));
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string | string[]; model: string };
        const inputs = typeof body.input === 'string' ? [body.input] : body.input;
        stub.answered++;
        stub.texts.push(...inputs);
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            object: 'list',
            data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: conceptVector(text, dims) })),
            model: body.model,
            usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
          }),
        );
      };
      const texts = (() => {
        try {
          const input = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input?: unknown }).input;
          return typeof input === 'string' ? [input] : Array.isArray(input) ? input.map(String) : [];
        } catch {
          return [];
        }
      })();
      if (held && (holdOnly === undefined || holdOnly(texts))) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const stub: EmbeddingsStub = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests: 0,
    answered: 0,
    texts: [],
    failNext(n, status = 429) {
      failures = { left: n, status };
    },
    hold(match) {
      held ??= [];
      holdOnly = match;
    },
    release() {
      const waiting = held ?? [];
      held = undefined;
      holdOnly = undefined;
      for (const answer of waiting) answer();
    },
    releaseOne() {
      held?.shift()?.();
    },
    waitForRequests(n) {
      if (stub.requests >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.add({ n, resolve }));
    },
    async close() {
      stub.release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return stub;
}
