/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI embeddings wire format, for tests.
 *
 * Vectors are a hashed bag of words: each lower-cased word adds 1 to a few hashed coordinates,
 * so identical texts give identical vectors and texts sharing words are similar.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FakeOpenAIMode =
  | 'ok'
  /** HTTP 500 (the SDK retries these; a `retry-after-ms: 1` header keeps retries fast). */
  | 'http500'
  /** HTTP 401 whose message echoes the key it was given, like a careless provider might. */
  | 'http401'
  /** Accepts the request and never answers. */
  | 'hang'
  /** HTTP 200 with a body that is not JSON. */
  | 'garbage'
  /** Vectors of half the configured dimension. */
  | 'wrongDims'
  /** One vector fewer than inputs. */
  | 'wrongCount'
  /** HTTP 200 JSON without a `data` array. */
  | 'noData'
  /** Vectors containing strings. */
  | 'nonNumeric'
  /** Correct vectors, but `data` listed in reverse order (with correct `index`). */
  | 'shuffled'
  /** HTTP 429 with `Retry-After: <retryAfterSeconds>` (setRetryAfter). */
  | 'http429'
  /** HTTP 200, a JSON body cut off halfway, then the connection closes. */
  | 'truncated';

export interface FakeOpenAIServer {
  /** Base URL ending in /v1, for `baseURL`. */
  readonly url: string;
  /** `times`: only the next N requests get `mode`; the ones after get 'ok'. */
  setMode(mode: FakeOpenAIMode, times?: number): void;
  /** The Retry-After seconds of 'http429' answers (default 1). */
  setRetryAfter(seconds: number): void;
  /** Stops listening and drops every connection (the provider is down); `up()` listens on the same port again. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Requests being answered (or hanging) now, and the most there ever were at once. */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Starts counting maxInFlight afresh. */
  resetMaxInFlight(): void;
  /** POST /v1/embeddings requests received so far. */
  readonly requests: number;
  /** Total inputs received over all requests. */
  readonly inputs: number;
  readonly lastAuthorization: string | undefined;
  /** The parsed JSON body of the last request. */
  readonly lastBody: unknown;
  close(): Promise<void>;
}

export function fakeEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) {
    const digest = createHash('sha256').update(word).digest();
    for (let k = 0; k < 3; k++) {
      const slot = digest.readUInt32BE(k * 4) % dimensions;
      vector[slot]! += digest[16 + k]! & 1 ? 1 : -1;
    }
  }
  // A small constant component keeps texts without words from being the zero vector.
  vector[0]! += 0.01;
  return vector;
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
};

export async function startFakeOpenAIServer(opts: { dimensions?: number } = {}): Promise<FakeOpenAIServer> {
  const dimensions = opts.dimensions ?? 1536;
  let mode: FakeOpenAIMode = 'ok';
  let modeTimes = Number.POSITIVE_INFINITY;
  let retryAfter = 1;
  let inFlight = 0;
  let maxInFlight = 0;
  let requests = 0;
  let inputs = 0;
  let lastAuthorization: string | undefined;
  let lastBody: unknown;
  const sockets = new Set<Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/embeddings') {
      sendJson(res, 404, { error: { message: `no route for ${req.method} ${req.url}`, type: 'invalid_request_error' } });
      return;
    }
    requests++;
    lastAuthorization = req.headers.authorization;
    const raw = await readBody(req);
    let body: { model?: unknown; input?: unknown; encoding_format?: unknown };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      sendJson(res, 400, { error: { message: 'request body is not JSON', type: 'invalid_request_error' } });
      return;
    }
    lastBody = body;
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || input.some((t) => typeof t !== 'string' || t === '')) {
      sendJson(res, 400, { error: { message: "'input' must be a non-empty string or array of them", type: 'invalid_request_error' } });
      return;
    }
    if (body.encoding_format !== undefined && body.encoding_format !== 'float') {
      sendJson(res, 400, { error: { message: 'this fake only speaks encoding_format float', type: 'invalid_request_error' } });
      return;
    }
    inputs += input.length;
    const texts = input as string[];
    const current = modeTimes > 0 ? mode : 'ok';
    modeTimes -= 1;

    switch (current) {
      case 'http500':
        sendJson(res, 500, { error: { message: 'The server had an error while processing your request.', type: 'server_error' } }, { 'retry-after-ms': '1' });
        return;
      case 'http401': {
        const key = (lastAuthorization ?? '').replace(/^Bearer\s+/i, '');
        sendJson(res, 401, {
          error: { message: `Incorrect API key provided: ${key}. You can find your API key at https://example.invalid.`, type: 'invalid_request_error', code: 'invalid_api_key' },
        });
        return;
      }
      case 'hang':
        return; // never answer; the socket is destroyed on close()
      case 'http429':
        sendJson(res, 429, { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': String(retryAfter) });
        return;
      case 'truncated': {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '10000' });
        res.end('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,');
        res.socket?.destroy();
        return;
      }
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('<html>definitely not json');
        return;
      case 'noData':
        sendJson(res, 200, { object: 'list', model: body.model, usage: { prompt_tokens: 0, total_tokens: 0 } });
        return;
      default:
        break;
    }

    const dims = current === 'wrongDims' ? Math.max(1, Math.floor(dimensions / 2)) : dimensions;
    let data = texts.map((text, index) => ({
      object: 'embedding' as const,
      index,
      embedding: current === 'nonNumeric' ? fakeEmbedding(text, dims).map(String) : fakeEmbedding(text, dims),
    }));
    if (current === 'wrongCount') data = data.slice(0, -1);
    if (current === 'shuffled') data = data.reverse();
    const tokens = texts.reduce((n, t) => n + t.split(/\s+/).filter(Boolean).length, 0);
    sendJson(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  };

  const server = createServer((req, res) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => (inFlight -= 1));
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: 'server_error' } });
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const stopListening = (): Promise<void> => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  };

  return {
    url: `http://127.0.0.1:${port}/v1`,
    setMode(m: FakeOpenAIMode, times = Number.POSITIVE_INFINITY) {
      mode = m;
      modeTimes = times;
    },
    setRetryAfter(seconds: number) {
      retryAfter = seconds;
    },
    down: stopListening,
    up() {
      return new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
    },
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    resetMaxInFlight() {
      maxInFlight = inFlight;
    },
    get requests() {
      return requests;
    },
    get inputs() {
      return inputs;
    },
    get lastAuthorization() {
      return lastAuthorization;
    },
    get lastBody() {
      return lastBody;
    },
    close(): Promise<void> {
      return server.listening ? stopListening() : Promise.resolve();
    },
  };
}
