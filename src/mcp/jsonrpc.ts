/** JSON-RPC 2.0 shapes and the protocol-level errors (the tool level has its own, see tool-result.ts). */

export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** MCP 2026-07-28: the HTTP headers do not mirror the body, or a required one is missing or malformed. */
  headerMismatch: -32020,
  /** MCP 2026-07-28: the request names a protocol version this server does not serve per request. */
  unsupportedProtocolVersion: -32022,
} as const;

export type RequestId = string | number;

export class JsonRpcError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'JsonRpcError';
    this.code = code;
    this.data = data;
  }
}

export interface JsonRpcRequest {
  readonly id: RequestId;
  readonly method: string;
  readonly params: Record<string, unknown>;
}

export type IncomingMessage =
  | { readonly kind: 'request'; readonly request: JsonRpcRequest }
  /** Notifications and client responses need no answer. */
  | { readonly kind: 'no-reply'; readonly method: string | undefined }
  | { readonly kind: 'invalid'; readonly id: RequestId | null; readonly error: JsonRpcError };

export type OutgoingMessage =
  | { jsonrpc: '2.0'; id: RequestId; result: unknown }
  | { jsonrpc: '2.0'; id: RequestId | null; error: { code: number; message: string; data?: unknown } };

export function errorResponse(id: RequestId | null, error: JsonRpcError): OutgoingMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
  };
}

/** Classifies one HTTP body. Batches (arrays) are refused: MCP since 2025-06-18 has none. */
export function parseMessage(body: string): IncomingMessage {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { kind: 'invalid', id: null, error: new JsonRpcError(RPC.parseError, 'Parse error: body is not valid JSON') };
  }
  if (Array.isArray(value)) {
    return { kind: 'invalid', id: null, error: new JsonRpcError(RPC.invalidRequest, 'Invalid Request: batches are not supported') };
  }
  if (typeof value !== 'object' || value === null) {
    return { kind: 'invalid', id: null, error: new JsonRpcError(RPC.invalidRequest, 'Invalid Request: expected a JSON object') };
  }
  const message = value as Record<string, unknown>;
  const id = isValidId(message.id) ? message.id : null;
  const invalid = (why: string): IncomingMessage => ({
    kind: 'invalid',
    id,
    error: new JsonRpcError(RPC.invalidRequest, `Invalid Request: ${why}`),
  });
  if (message.jsonrpc !== '2.0') return invalid('"jsonrpc" must be "2.0"');
  if (!('method' in message)) {
    // A response to a server-initiated request; this server sends none, so there is nothing to do.
    if ('result' in message || 'error' in message) return { kind: 'no-reply', method: undefined };
    return invalid('"method" is required');
  }
  if (typeof message.method !== 'string' || message.method === '') return invalid('"method" must be a non-empty string');
  if (message.params !== undefined && (typeof message.params !== 'object' || message.params === null || Array.isArray(message.params))) {
    return invalid('"params" must be an object');
  }
  if (!('id' in message)) return { kind: 'no-reply', method: message.method };
  if (!isValidId(message.id)) return invalid('"id" must be a string or a number');
  return {
    kind: 'request',
    request: { id: message.id, method: message.method, params: (message.params ?? {}) as Record<string, unknown> },
  };
}

function isValidId(id: unknown): id is RequestId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/**
 * A result serialized once and sent many times (tools/list: its schemas stay the same while the process
 * runs). Kept as UTF-8 bytes, so each answer copies them instead of stringifying, measuring and encoding
 * ~10 kB of JSON again. `toJSON` keeps plain JSON.stringify right.
 */
export class PreSerialized {
  readonly json: string;
  readonly bytes: Buffer;

  constructor(value: unknown) {
    this.json = JSON.stringify(value);
    this.bytes = Buffer.from(this.json, 'utf8');
  }

  toJSON(): unknown {
    return JSON.parse(this.json);
  }
}

/** The wire bytes of one answer, and what to call once they have been written out or their connection is gone. */
export interface Answer {
  readonly bytes: Buffer;
  readonly release: () => void;
}

/**
 * Answers are cut from shared slabs, as Node's own pool does for buffers under 4 kB: a fresh ArrayBuffer for
 * each larger answer (tools/list's is ~22 kB) cost more to allocate and collect than copying the bytes did. A
 * filled slab is used again once every answer cut from it has been released, so a slice still being written to
 * a socket is never overwritten: a fresh slab every dozen tools/list answers cost Node 24 about half of the
 * request's CPU (the allocation, not the copy; issue 40). An answer never released keeps its slab from reuse
 * (the collector frees it with its last slice); at most SPARE_SLABS wait to be used again.
 */
const SLAB_BYTES = 256 * 1024;
const SPARE_SLABS = 4;

class Slab {
  readonly bytes = Buffer.allocUnsafeSlow(SLAB_BYTES);
  offset = 0;
  /** Answers cut from it and not yet released. */
  unreleased = 0;
  /** Takes no more answers: back to the spares when its last answer is released. */
  full = false;
}

let slab = new Slab();
const spares: Slab[] = [];

function reuse(done: Slab): void {
  if (spares.length >= SPARE_SLABS) return;
  done.offset = 0;
  done.full = false;
  spares.push(done);
}

const nothingToRelease = (): void => {};

function answerBuffer(length: number): Answer {
  if (length > SLAB_BYTES / 4) return { bytes: Buffer.allocUnsafeSlow(length), release: nothingToRelease };
  if (slab.offset + length > SLAB_BYTES) {
    slab.full = true;
    if (slab.unreleased === 0) reuse(slab);
    slab = spares.pop() ?? new Slab();
  }
  const from = slab;
  const bytes = from.bytes.subarray(from.offset, from.offset + length);
  from.offset = (from.offset + length + 7) & ~7;
  from.unreleased++;
  let released = false;
  return {
    bytes,
    release() {
      if (released) return;
      released = true;
      if (--from.unreleased === 0 && from.full) reuse(from);
    },
  };
}

/**
 * The wire form of a response, as UTF-8 bytes (Fastify then sends them as they are: no length count or
 * encoding pass over a string); a PreSerialized result is spliced in as it is.
 */
export function serializeMessage(message: OutgoingMessage): Answer {
  if ('result' in message && message.result instanceof PreSerialized) {
    const result = message.result.bytes;
    const { answer, written } = encodeAnswer(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":`, result.length + 1);
    result.copy(answer.bytes, written);
    answer.bytes[answer.bytes.length - 1] = 0x7d; // the closing brace
    return answer;
  }
  return encodeAnswer(JSON.stringify(message), 0).answer;
}

/** An answer with `text` as UTF-8 at its start and `moreBytes` left after it. */
function encodeAnswer(text: string, moreBytes: number): { answer: Answer; written: number } {
  const written = Buffer.byteLength(text);
  const answer = answerBuffer(written + moreBytes);
  answer.bytes.write(text, 0, 'utf8');
  return { answer, written };
}
