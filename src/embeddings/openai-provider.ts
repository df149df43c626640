import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { embeddingError, isServiceError } from '../errors.js';
import type { ServiceError } from '../errors.js';
import type { EmbeddingProvider } from './provider.js';
import { ProviderGuard } from './provider-guard.js';
import { normaliseVector } from './vector.js';

/** Options as src/config validates them: an http(s) base URL without credentials, a model name, a positive dimension. */
export interface OpenAIProviderOptions {
  /** Required for the official API; optional when `baseUrl` points at a local server. */
  readonly apiKey: string | undefined;
  /** Any OpenAI-compatible server (Ollama, vLLM, LM Studio, …), e.g. http://localhost:11434/v1. */
  readonly baseUrl?: string | undefined;
  readonly model: string;
  /** Required knowledge for unknown models; discovered by ready() if not given. */
  readonly dimensions?: number | undefined;
  /** Longest one embed() call may take, waiting for a slot and retries included (default 10 000 ms). */
  readonly timeoutMs?: number;
  /** Retries of connection errors and 408/409/429/5xx, within the deadline (default 2). */
  readonly maxRetries?: number;
  /** Requests in flight at once (default 8). */
  readonly concurrency?: number;
  /** embed() calls waiting for a free slot; past it they fail at once (default 64). */
  readonly queueLimit?: number;
  /** Failed calls in a row after which calls fail at once for `coolDownMs` (default 5 and 5 000 ms). */
  readonly failuresToOpen?: number;
  readonly coolDownMs?: number;
  /** Texts per HTTP request (default 256). */
  readonly maxBatchSize?: number;
}

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_OPENAI_MODEL = 'text-embedding-3-small';

/** Native output sizes of OpenAI's embedding models. */
export const KNOWN_OPENAI_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

export const DEFAULT_EMBEDDING_TIMEOUT_MS = 10_000;
export const DEFAULT_EMBEDDING_CONCURRENCY = 8;
export const DEFAULT_EMBEDDING_QUEUE_LIMIT = 64;
const DEFAULT_MAX_RETRIES = 2;
/** First retry's wait when the server names none; doubled for each further retry. */
const BACKOFF_MS = 200;
const DEFAULT_MAX_BATCH_SIZE = 256;
const PROBE_TEXT = 'dimension probe';
const SOURCE = 'embedding provider';
const MAX_PROVIDER_MESSAGE = 300;

/** The URL without credentials, query or fragment: safe to put in an error message. */
function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return '(invalid URL)';
  }
}

/** Removes the key itself and anything shaped like a key or bearer token from provider text. */
function redact(text: string, apiKey: string | undefined): string {
  let out = text;
  if (apiKey && apiKey.length >= 4) out = out.split(apiKey).join('[redacted]');
  out = out
    .replace(/\bBearer\s+\S+/gi, 'Bearer [redacted]')
    .replace(/\bsk-[A-Za-z0-9_*.-]{6,}/g, 'sk-[redacted]');
  if (out.length > MAX_PROVIDER_MESSAGE) out = `${out.slice(0, MAX_PROVIDER_MESSAGE)}…`;
  return out;
}

function errorCode(error: unknown): string | undefined {
  // Node's fetch (undici) wraps the socket error: TypeError('fetch failed', { cause: { code } }).
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Seconds (or milliseconds) the server asks us to wait, from `retry-after-ms` or `retry-after`. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after');
  if (value === null || value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

const RETRIED_STATUSES = new Set([408, 409, 429]);
const isRetriedStatus = (status: number): boolean => RETRIED_STATUSES.has(status) || status >= 500;

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });

export function createOpenAIProvider(options: OpenAIProviderOptions): EmbeddingProvider {
  const apiModel = options.model;
  const { baseUrl, apiKey } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_EMBEDDING_TIMEOUT_MS;
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const maxBatchSize = options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE;
  const where = displayUrl(baseUrl ?? OPENAI_DEFAULT_BASE_URL);
  const guard = new ProviderGuard({
    source: `${SOURCE} at ${where}`,
    concurrency: options.concurrency ?? DEFAULT_EMBEDDING_CONCURRENCY,
    queueLimit: options.queueLimit ?? DEFAULT_EMBEDDING_QUEUE_LIMIT,
    ...(options.failuresToOpen === undefined ? {} : { failuresToOpen: options.failuresToOpen }),
    ...(options.coolDownMs === undefined ? {} : { coolDownMs: options.coolDownMs }),
  });
  /** Errors that are the provider's fault (down, hanging, 5xx, 429, garbage), as opposed to a refused request. */
  const faults = new WeakSet<ServiceError>();
  const fault = (error: ServiceError): ServiceError => {
    faults.add(error);
    return error;
  };

  const nativeDimensions = KNOWN_OPENAI_DIMENSIONS[apiModel];
  let dimensions: number | undefined = options.dimensions ?? nativeDimensions;
  // text-embedding-3-* can shorten their output on request; other models (and other servers) cannot.
  const requestDimensions =
    options.dimensions !== undefined && apiModel.startsWith('text-embedding-3') && options.dimensions !== nativeDimensions
      ? options.dimensions
      : undefined;

  let client: OpenAI | undefined;
  let readyPromise: Promise<void> | undefined;
  let isReady = false;
  let closed = false;

  const getClient = (): OpenAI => {
    if (!apiKey && !baseUrl) throw embeddingError('OPENAI_API_KEY is not set');
    client ??= new OpenAI({
      // Local servers usually ignore the key, but the SDK insists on one.
      apiKey: apiKey ?? 'unused',
      // Explicit, so the SDK does not silently pick up OPENAI_BASE_URL from the environment.
      baseURL: baseUrl ?? OPENAI_DEFAULT_BASE_URL,
      // Retries and the deadline are ours (below): the SDK would wait out any Retry-After, past our deadline.
      maxRetries: 0,
      timeout: timeoutMs,
    });
    return client;
  };

  const mapError = (error: unknown): ServiceError => {
    if (isServiceError(error)) return error;
    if (error instanceof APIConnectionTimeoutError || error instanceof APIUserAbortError) {
      return fault(embeddingError(`${SOURCE} at ${where} did not answer within ${timeoutMs} ms`));
    }
    if (error instanceof APIConnectionError) {
      const code = errorCode(error.cause);
      return fault(embeddingError(`${SOURCE} at ${where} is unreachable${code ? ` (${code})` : ''}`, error.cause));
    }
    if (error instanceof APIError) {
      const status = error.status ?? 0;
      const prefix = `${status} `;
      const raw = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      // The raw SDK error is not kept as the cause: its text may echo the key back.
      const mapped = embeddingError(`${SOURCE} returned HTTP ${status}: ${redact(raw, apiKey)}`);
      return isRetriedStatus(status) ? fault(mapped) : mapped;
    }
    if (error instanceof SyntaxError) {
      return fault(embeddingError(`${SOURCE} at ${where} returned a malformed response (not JSON)`));
    }
    const message = error instanceof Error ? error.message : String(error);
    return fault(embeddingError(`${SOURCE} request failed: ${redact(message, apiKey)}`));
  };

  /**
   * One embeddings request, retried on connection errors and 408/409/429/5xx while the deadline allows: after
   * the wait the server names (Retry-After), else after a doubling back-off. A wait that would end past the
   * deadline is not started; a 429 then says when to come back.
   */
  const send = async (input: string[], signal: AbortSignal, deadline: number): Promise<unknown> => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await getClient().embeddings.create(
          { model: apiModel, input, encoding_format: 'float', ...(requestDimensions !== undefined ? { dimensions: requestDimensions } : {}) },
          { signal, timeout: Math.max(1, deadline - Date.now()) },
        );
      } catch (error) {
        const status = error instanceof APIError ? error.status : undefined;
        const retryable = (status !== undefined && isRetriedStatus(status)) || (error instanceof APIConnectionError && !(error instanceof APIConnectionTimeoutError));
        if (!retryable || signal.aborted) throw mapError(error);
        const asked = error instanceof APIError ? retryAfterMs(error.headers) : undefined;
        const wait = asked ?? BACKOFF_MS * 2 ** attempt;
        if (status === 429 && (attempt >= maxRetries || Date.now() + wait >= deadline)) {
          const seconds = Math.max(1, Math.ceil(wait / 1000));
          throw fault(embeddingError(`${SOURCE} at ${where} is rate limiting requests (HTTP 429); retry in ${seconds} s`));
        }
        if (attempt >= maxRetries || Date.now() + wait >= deadline) throw mapError(error);
        await sleep(wait, signal);
        if (signal.aborted) throw mapError(error);
      }
    }
  };

  /** One HTTP request (with retries); returns the raw vectors in input order, validated but not normalised. */
  const request = async (input: string[], signal: AbortSignal, deadline: number): Promise<unknown[]> => {
    const response = await send(input, signal, deadline);
    const data = (response as { data?: unknown } | null | undefined)?.data;
    if (!Array.isArray(data)) {
      throw fault(embeddingError(`${SOURCE} at ${where} returned a malformed response (no data array)`));
    }
    if (data.length !== input.length) {
      throw fault(embeddingError(`${SOURCE} returned ${data.length} vectors for ${input.length} input${input.length === 1 ? '' : 's'}`));
    }
    const vectors = new Array<unknown>(input.length);
    data.forEach((item: unknown, position) => {
      const entry = item as { index?: unknown; embedding?: unknown } | null;
      // Results are ordered by `index`; fall back to position if a server omits it.
      const index = entry?.index === undefined ? position : entry.index;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= input.length || vectors[index] !== undefined) {
        throw fault(embeddingError(`${SOURCE} returned a malformed response (bad or duplicate index)`));
      }
      if (!Array.isArray(entry?.embedding)) {
        throw fault(embeddingError(`${SOURCE} returned a malformed response (embedding is not an array of numbers)`));
      }
      vectors[index] = entry.embedding;
    });
    return vectors;
  };

  /** Runs `work` under the guard with this call's deadline; every failure is an EMBEDDING_ERROR. */
  const guarded = <T>(work: (signal: AbortSignal, deadline: number) => Promise<T>): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    return guard
      .run(deadline, (error) => isServiceError(error) && faults.has(error), async (signal) => {
        try {
          return await work(signal, deadline);
        } catch (error) {
          throw mapError(error);
        }
      });
  };

  const validated = (vector: unknown): number[] => {
    try {
      return normaliseVector(vector, dimensions!, SOURCE);
    } catch (error) {
      throw isServiceError(error) ? fault(error) : error;
    }
  };

  const ready = (): Promise<void> => {
    if (closed) return Promise.reject(embeddingError('embedding provider is closed'));
    if (isReady) {
      // Ready once, but not while it is known to be failing (readiness reports that).
      return guard.available ? Promise.resolve() : Promise.reject(embeddingError(`${SOURCE} at ${where} is failing`));
    }
    readyPromise ??= guarded(async (signal, deadline) => {
      // One probe checks key, URL and model, and learns the dimension if it is not known.
      const [vector] = await request([PROBE_TEXT], signal, deadline);
      if (dimensions === undefined) {
        const length = Array.isArray(vector) ? vector.length : 0;
        if (length < 1) throw embeddingError(`${SOURCE} returned an empty embedding for model ${apiModel}`);
        dimensions = length;
      }
      validated(vector);
      isReady = true;
    }).catch((error: unknown) => {
      readyPromise = undefined; // a later call may try again (e.g. the server came up)
      throw mapError(error);
    });
    return readyPromise;
  };

  return {
    model: `openai:${apiModel}`,
    /** 0 until ready() has discovered it, for a model whose dimension was neither known nor given. */
    get dimensions(): number {
      return dimensions ?? 0;
    },

    async embed(texts: readonly string[]): Promise<number[][]> {
      if (closed) throw embeddingError('embedding provider is closed');
      if (texts.length === 0) return [];
      if (dimensions === undefined) await ready();
      return guarded(async (signal, deadline) => {
        const out: number[][] = [];
        for (let start = 0; start < texts.length; start += maxBatchSize) {
          // The API rejects empty strings; a single space embeds as "nothing" just as well.
          const chunk = texts.slice(start, start + maxBatchSize).map((t) => (t === '' ? ' ' : t));
          for (const v of await request(chunk, signal, deadline)) out.push(validated(v));
        }
        return out;
      });
    },

    ready,

    async close(): Promise<void> {
      closed = true;
      client = undefined;
    },
  };
}
