import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { embeddingError, isServiceError } from '../errors.js';
import type { ServiceError } from '../errors.js';
import type { EmbeddingProvider } from './provider.js';
import { normaliseVector } from './vector.js';

/** Options as src/config validates them: an http(s) base URL without credentials, a model name, a positive dimension. */
export interface OpenAIProviderOptions {
  /** Required for the official API; optional when `baseUrl` points at a local server. */
  apiKey: string | undefined;
  /** Any OpenAI-compatible server (Ollama, vLLM, LM Studio, …), e.g. http://localhost:11434/v1. */
  baseUrl?: string | undefined;
  model: string;
  /** Required knowledge for unknown models; discovered by ready() if not given. */
  dimensions?: number | undefined;
  /** Per HTTP attempt (default 15 000 ms). */
  timeoutMs?: number;
  /** Retries of connection errors, timeouts, 408/409/429/5xx (default 2). */
  maxRetries?: number;
  /** Texts per HTTP request (default 256). */
  maxBatchSize?: number;
}

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_OPENAI_MODEL = 'text-embedding-3-small';

/** Native output sizes of OpenAI's embedding models. */
export const KNOWN_OPENAI_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_RETRIES = 2;
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

export function createOpenAIProvider(options: OpenAIProviderOptions): EmbeddingProvider {
  const apiModel = options.model;
  const { baseUrl, apiKey } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const maxBatchSize = options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE;
  const where = displayUrl(baseUrl ?? OPENAI_DEFAULT_BASE_URL);

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
      timeout: timeoutMs,
      maxRetries,
    });
    return client;
  };

  const mapError = (error: unknown): ServiceError => {
    if (isServiceError(error)) return error;
    if (error instanceof APIConnectionTimeoutError) {
      return embeddingError(`${SOURCE} at ${where} timed out after ${timeoutMs} ms`);
    }
    if (error instanceof APIUserAbortError) {
      return embeddingError(`request to ${SOURCE} at ${where} was aborted`);
    }
    if (error instanceof APIConnectionError) {
      const code = errorCode(error.cause);
      return embeddingError(`${SOURCE} at ${where} is unreachable${code ? ` (${code})` : ''}`, error.cause);
    }
    if (error instanceof APIError) {
      const status = error.status ?? 0;
      const prefix = `${status} `;
      const raw = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      // The raw SDK error is not kept as the cause: its text may echo the key back.
      return embeddingError(`${SOURCE} returned HTTP ${status}: ${redact(raw, apiKey)}`);
    }
    if (error instanceof SyntaxError) {
      return embeddingError(`${SOURCE} at ${where} returned a malformed response (not JSON)`);
    }
    const message = error instanceof Error ? error.message : String(error);
    return embeddingError(`${SOURCE} request failed: ${redact(message, apiKey)}`);
  };

  /** One HTTP request; returns the raw vectors in input order, validated but not normalised. */
  const request = async (input: string[]): Promise<unknown[]> => {
    let response: unknown;
    try {
      response = await getClient().embeddings.create({
        model: apiModel,
        input,
        encoding_format: 'float',
        ...(requestDimensions !== undefined ? { dimensions: requestDimensions } : {}),
      });
    } catch (error) {
      throw mapError(error);
    }
    const data = (response as { data?: unknown } | null | undefined)?.data;
    if (!Array.isArray(data)) {
      throw embeddingError(`${SOURCE} at ${where} returned a malformed response (no data array)`);
    }
    if (data.length !== input.length) {
      throw embeddingError(`${SOURCE} returned ${data.length} vectors for ${input.length} input${input.length === 1 ? '' : 's'}`);
    }
    const vectors = new Array<unknown>(input.length);
    data.forEach((item: unknown, position) => {
      const entry = item as { index?: unknown; embedding?: unknown } | null;
      // Results are ordered by `index`; fall back to position if a server omits it.
      const index = entry?.index === undefined ? position : entry.index;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= input.length || vectors[index] !== undefined) {
        throw embeddingError(`${SOURCE} returned a malformed response (bad or duplicate index)`);
      }
      if (!Array.isArray(entry?.embedding)) {
        throw embeddingError(`${SOURCE} returned a malformed response (embedding is not an array of numbers)`);
      }
      vectors[index] = entry.embedding;
    });
    return vectors;
  };

  const ready = (): Promise<void> => {
    if (closed) return Promise.reject(embeddingError('embedding provider is closed'));
    if (isReady) return Promise.resolve();
    readyPromise ??= (async () => {
      // One probe checks key, URL and model, and learns the dimension if it is not known.
      const [vector] = await request([PROBE_TEXT]);
      if (dimensions === undefined) {
        const length = Array.isArray(vector) ? vector.length : 0;
        if (length < 1) throw embeddingError(`${SOURCE} returned an empty embedding for model ${apiModel}`);
        dimensions = length;
      }
      normaliseVector(vector, dimensions, SOURCE);
      isReady = true;
    })().catch((error: unknown) => {
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
      if (texts.length === 0) {
        if (closed) throw embeddingError('embedding provider is closed');
        return [];
      }
      await ready();
      const dims = dimensions!;
      const out: number[][] = [];
      for (let start = 0; start < texts.length; start += maxBatchSize) {
        // The API rejects empty strings; a single space embeds as "nothing" just as well.
        const chunk = texts.slice(start, start + maxBatchSize).map((t) => (t === '' ? ' ' : t));
        const vectors = await request(chunk);
        for (const v of vectors) out.push(normaliseVector(v, dims, SOURCE));
      }
      return out;
    },

    ready,

    async close(): Promise<void> {
      closed = true;
      client = undefined;
    },
  };
}
