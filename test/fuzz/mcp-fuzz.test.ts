import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddingProvider } from '../../src/embeddings/provider.js';
import { engines, type Engine } from '../helpers/engines.js';
import { sharedLocalEmbedder } from '../helpers/shared.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Property-based fuzzing of POST /mcp, on both engines: arbitrary JSON-RPC envelopes and, for every tool, valid
 * and mutated arguments (wrong types, boundaries, U+0000, lone surrogates, extreme timestamps, unknown and
 * `__proto__` keys, strings near their limits). Whatever arrives:
 *   - the answer is never a 5xx, and the server still answers a ping afterwards (no crash);
 *   - a 200 carries JSON-RPC with a result or an error, and a tool error has one of the documented codes
 *     (INVALID_INPUT, SECRET_REJECTED, NOT_FOUND: a DATABASE_ERROR or EMBEDDING_ERROR here would be a bug);
 *   - a refused call (JSON-RPC error, tool error, notification, non-200) changes nothing in the database.
 * Fixed seeds and bounded runs keep it deterministic and quick. Most runs embed with a hashing embedder (a fake
 * only at the embedding edge); a few run with the real local model.
 */

const SEED = 20_261_123;
const TOOL_CODES = ['INVALID_INPUT', 'SECRET_REJECTED', 'NOT_FOUND'];
const RPC_CODES = [-32700, -32600, -32601, -32602];
const TOOLS = ['remember', 'recall', 'list_memories', 'forget', 'correct', 'confirm'] as const;

/** Deterministic 512-dimensional unit vectors from a hash of the text: fast, and equal texts embed equally. */
function hashingEmbedder(): EmbeddingProvider {
  const dimensions = 512;
  return {
    model: 'fuzz:sha256-512',
    dimensions,
    async embed(texts) {
      return texts.map((text) => {
        const vector: number[] = [];
        for (let block = 0; vector.length < dimensions; block++) {
          const digest = createHash('sha256').update(`${block}:${text}`).digest();
          for (const byte of digest) vector.push(byte - 127.5);
        }
        const norm = Math.hypot(...vector);
        return vector.slice(0, dimensions).map((value) => value / norm);
      });
    },
    ready: async () => undefined,
    close: async () => undefined,
  };
}

// ---- Arbitraries -------------------------------------------------------------------------------------------

/** Any UTF-16 code unit (U+0000 and lone surrogates included), any code point, or plain ASCII. */
const anyUnit = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
);
const edgeStrings = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDC00',
  '\uDBFF\uDBFF',
  '🧠',
  '\u202Eevil',
  '__proto__',
  'constructor',
  'The user likes green tea',
  'my password is hunter2',
  `ghp_${'A1b2C3d4'.repeat(5)}`,
  'a'.repeat(200),
  'a'.repeat(201),
  '🧠'.repeat(16_000),
  'b'.repeat(16_001),
);
const fuzzString = fc.oneof({ weight: 5, arbitrary: fc.string({ unit: anyUnit, maxLength: 60 }) }, { weight: 2, arbitrary: edgeStrings });

const isoTimestamps = fc.oneof(
  fc.constantFrom(
    '0000-01-01T00:00:00Z',
    '0000-12-31T23:59:59.999Z',
    '0001-01-01T00:00:00Z',
    '0001-01-01T00:30:00+01:00',
    '9999-12-31T23:59:59.999Z',
    '9999-12-31T23:59:59-01:00',
    '+010000-01-01T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:00:00',
    '2024-01-01',
    'tomorrow',
    '2099-06-01T12:00:00+14:00',
    '2000-01-01T00:00:00-12:00',
  ),
  fc
    .tuple(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), fc.integer({ min: -14 * 60, max: 14 * 60 }))
    .map(([date, offset]) => {
      const local = new Date(date.getTime() + offset * 60_000).toISOString().slice(0, 23);
      const sign = offset < 0 ? '-' : '+';
      const minutes = Math.abs(offset);
      return `${local}${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
    }),
);

const jsonNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, -1, 0.5, 1, 1.0000001, 2 ** 53, 2 ** 53 + 2, 1e308, -1e308, 5e-324),
);
/** Something of the wrong type for any field. */
const wrongType = fc.oneof(fc.constant(null), fc.boolean(), jsonNumber, fuzzString, fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }));
const deeplyNested = fc.integer({ min: 50, max: 400 }).map((depth) => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) as unknown);

const text = fc.oneof({ weight: 3, arbitrary: fc.lorem({ maxCount: 8, mode: 'words' }).map((words) => `The user ${words}`) }, { weight: 3, arbitrary: fuzzString });
const tags = fc.array(fc.oneof(fc.constantFrom('work', '#Health', ' Project_Alpha ', 'ＡＢＣ', ' # '), fuzzString), { maxLength: 22 });
const enumOf = (...values: string[]) => fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: fuzzString });
const memoryIdFrom = (known: () => number[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 5 }).map((index) => known()[index] ?? 1) },
    { weight: 1, arbitrary: fc.integer({ min: -5, max: 2 ** 31 }) },
    { weight: 1, arbitrary: jsonNumber },
  );
/** Optional fields: a value, or null (= absent); fc.record also leaves keys out. */
const optional = (arbitrary: fc.Arbitrary<unknown>) => fc.option(arbitrary, { nil: null, freq: 5 });

/**
 * Arguments of the right types, whose values still roam (U+0000, lone surrogates, boundaries, extreme
 * timestamps, secrets), so that many calls get past the schema and reach the service and the database; then
 * at most one mutation: a field of the wrong type or deeply nested, a required field dropped, or unknown keys
 * (`__proto__` among them).
 */
function shapesFor(tool: (typeof TOOLS)[number], known: () => number[]): Record<string, fc.Arbitrary<unknown>> {
  const filters = {
    tags: optional(tags),
    tag_match: optional(enumOf('any', 'all')),
    session_id: optional(fuzzString),
    capture_mode: optional(enumOf('explicit', 'inferred')),
    source_provider: optional(fuzzString),
    created_after: optional(isoTimestamps),
    created_before: optional(isoTimestamps),
  };
  const shapesByTool: Record<(typeof TOOLS)[number], Record<string, fc.Arbitrary<unknown>>> = {
    remember: {
      text,
      tags: optional(tags),
      source_provider: optional(fuzzString),
      importance: optional(fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 1, -0.01, 1.01))),
      capture_mode: optional(enumOf('explicit', 'inferred')),
      session_id: optional(fuzzString),
      expires_at: optional(isoTimestamps),
      last_confirmed_at: optional(isoTimestamps),
      dedup_policy: optional(enumOf('insert', 'skip_if_near', 'ask')),
    },
    recall: {
      query: text,
      limit: optional(fc.integer({ min: -1, max: 51 })),
      max_chars: optional(fc.integer({ min: 199, max: 100_001 })),
      ...filters,
    },
    list_memories: {
      limit: optional(fc.integer({ min: -1, max: 101 })),
      cursor: optional(
        fc.oneof(
          fuzzString,
          fc.constantFrom(
            Buffer.from('["0000-01-01T00:00:00.000000Z",1]').toString('base64url'),
            Buffer.from('["2024-02-31T00:00:00.000000Z",1]').toString('base64url'),
            Buffer.from('["9999-12-31T23:59:59.999999Z",9007199254740991]').toString('base64url'),
          ),
        ),
      ),
      include_expired: optional(fc.boolean()),
      max_chars: optional(fc.integer({ min: 199, max: 100_001 })),
      ...filters,
    },
    forget: { memory_id: memoryIdFrom(known), reason: optional(fuzzString) },
    correct: {
      memory_id: memoryIdFrom(known),
      text,
      tags: optional(tags),
      importance: optional(fc.double({ min: 0, max: 1, noNaN: true })),
      source_provider: optional(fuzzString),
      capture_mode: optional(enumOf('explicit', 'inferred')),
      session_id: optional(fuzzString),
      expires_at: optional(isoTimestamps),
      reason: optional(fuzzString),
    },
    confirm: { memory_id: memoryIdFrom(known) },
  };
  return shapesByTool[tool];
}

/** The argument names a tool declares. */
const fieldsOf = (tool: (typeof TOOLS)[number]): string[] => Object.keys(shapesFor(tool, () => []));

function argumentsFor(tool: (typeof TOOLS)[number], known: () => number[]): fc.Arbitrary<Record<string, unknown>> {
  const shapes = shapesFor(tool, known);
  const fields = Object.keys(shapes);
  const required = fields.filter((field) => ['text', 'query', 'memory_id'].includes(field));
  const record = fc.record(shapes, { requiredKeys: required as never[] }) as fc.Arbitrary<Record<string, unknown>>;
  const unknownKeys = fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'memoryId')), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1, maxKeys: 2 });
  const mutation = fc.oneof(
    { weight: 6, arbitrary: fc.constant((args: Record<string, unknown>) => args) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...fields), fc.oneof(wrongType, deeplyNested)).map(([field, value]) => (args: Record<string, unknown>) => ({ ...args, [field]: value })) },
    { weight: 1, arbitrary: unknownKeys.map((extra) => (args: Record<string, unknown>) => ({ ...args, ...extra })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...fields).map((field) => (args: Record<string, unknown>) => Object.fromEntries(Object.entries(args).filter(([key]) => key !== field))),
    },
  );
  return fc.tuple(record, mutation).map(([args, mutate]) => mutate(args));
}

/** JSON text for a value, with `__proto__` kept as an own key (JSON.stringify would keep it too; spread would not). */
const toJson = (value: unknown): string => JSON.stringify(value);

function envelope(known: () => number[]): fc.Arbitrary<string> {
  const method = fc.oneof(fc.constantFrom('initialize', 'ping', 'tools/list', 'tools/call', 'notifications/initialized', 'resources/list', '', 'toString', '__proto__', 'constructor'), fuzzString, wrongType);
  const id = fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), fc.double({ noNaN: true }), fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 1 }), fc.boolean());
  const toolCall = fc
    .tuple(fc.oneof(fc.constantFrom(...TOOLS), fuzzString, wrongType), fc.constantFrom(...TOOLS))
    .chain(([name, shapeOf]) => fc.record({ name: fc.constant(name), arguments: fc.oneof({ weight: 4, arbitrary: argumentsFor(shapeOf, known) }, { weight: 1, arbitrary: wrongType }) }, { requiredKeys: ['name'] }));
  const params = fc.oneof(toolCall, fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), wrongType);
  const message = fc.record(
    {
      jsonrpc: fc.oneof({ weight: 6, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: fc.constantFrom('1.0', 2, null, '2.0 ') }),
      id,
      method,
      params,
      result: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  );
  // An own "__proto__" key, written into the JSON text (an object literal would set the prototype instead).
  const withProto = fc.tuple(message, fc.jsonValue({ maxDepth: 1 })).map(([value, proto]) => {
    const json = toJson(value);
    return json === '{}' ? `{"__proto__":${toJson(proto)}}` : `{"__proto__":${toJson(proto)},${json.slice(1)}`;
  });
  return fc.oneof(
    { weight: 7, arbitrary: message.map(toJson) },
    { weight: 1, arbitrary: withProto },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(toJson) },
    { weight: 1, arbitrary: fc.string({ unit: anyUnit, maxLength: 80 }) },
    { weight: 1, arbitrary: message.map((value) => toJson(value).slice(0, -1)) },
    { weight: 1, arbitrary: fc.array(message, { maxLength: 2 }).map(toJson) },
  );
}

// ---- The properties ----------------------------------------------------------------------------------------

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

function checkAnswer(answer: Answer, request: string): 'changed-maybe' | 'refused' {
  const where = `request ${request.slice(0, 300)} → ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)}`;
  expect(answer.status, where).toBeLessThan(500);
  expect([200, 202, 400, 413, 415], where).toContain(answer.status);
  if (answer.status === 202) {
    expect(answer.body, where).toBeUndefined();
    return 'refused';
  }
  const body = answer.body as { jsonrpc?: unknown; result?: { isError?: boolean; structuredContent?: { ok?: unknown; error?: { code?: unknown; message?: unknown } } }; error?: { code?: unknown; message?: unknown } };
  expect(body?.jsonrpc, where).toBe('2.0');
  expect('result' in body !== 'error' in body, where).toBe(true);
  if (body.error !== undefined) {
    expect(RPC_CODES, where).toContain(body.error.code);
    expect(typeof body.error.message, where).toBe('string');
    return 'refused';
  }
  expect(answer.status, where).toBe(200);
  const result = body.result!;
  if (result.isError === true) {
    expect(TOOL_CODES, where).toContain(result.structuredContent?.error?.code);
    expect(typeof result.structuredContent?.error?.message, where).toBe('string');
    return 'refused';
  }
  if (result.structuredContent !== undefined) expect(result.structuredContent.ok, where).toBe(true);
  return 'changed-maybe';
}

describe.each(engines)('fuzzing POST /mcp on %s', (engine: Engine) => {
  let server: TestServer;
  let token: string;
  let known: number[] = [];
  const subject = `fuzz-${Date.now()}`;

  beforeAll(async () => {
    // No rate limit: the fuzzer sends far more than 600 requests a minute.
    server = await startTestServer({ engine, embedder: hashingEmbedder(), env: { MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '0' } });
    token = await server.token(subject);
    for (const fact of ['The user likes green tea', 'The user lives in Porto', 'The user has a cat named Miso']) {
      known.push((await server.call(token, 'remember', { text: fact, tags: ['seed'] })).structured.memory_id as number);
    }
  });
  afterAll(async () => {
    await server.close();
  });

  /** Every row of every table (all subjects), as one digest: a refused call must leave it as it was. */
  const snapshot = () =>
    server.service.db.withAllSubjects('inspecting rows', async (trx) => {
      const { rows } = await sql<{ digest: string }>`
        select md5(coalesce((select string_agg(m::text, '|' order by id) from memories m), '') ||
                   coalesce((select string_agg(t::text, '|' order by id) from tombstones t), '') ||
                   coalesce((select string_agg(s::text, '|' order by subject) from subject_stats s), '')) as digest`.execute(trx);
      return rows[0]!.digest;
    });

  const refreshKnown = async () => {
    known = await server.service.db.withSubject(subject, 'inspecting rows', async (trx) =>
      (await trx.selectFrom('memories').select('id').orderBy('id', 'desc').limit(6).execute()).map((row) => Number(row.id)),
    );
  };

  async function send(body: string): Promise<Answer> {
    const response = await server.post(body, { authorization: `Bearer ${token}` });
    const raw = await response.text();
    return { status: response.status, body: raw === '' ? undefined : (JSON.parse(raw) as unknown) };
  }

  async function stillAlive(): Promise<void> {
    const ping = await send('{"jsonrpc":"2.0","id":"alive","method":"ping"}');
    expect(ping).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 'alive', result: {} } });
  }

  /** Sends `body`, checks the answer, and that a refused call changed nothing; returns the answer. */
  async function exercise(body: string): Promise<Answer> {
    const before = await snapshot();
    const answer = await send(body);
    if (checkAnswer(answer, body) === 'refused') expect(await snapshot(), `state changed by a refused call: ${body.slice(0, 300)}`).toBe(before);
    else await refreshKnown();
    await stillAlive();
    return answer;
  }

  it('answers arbitrary JSON-RPC envelopes with a specific code and never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(envelope(() => known), async (body) => {
        await exercise(body);
      }),
      { seed: SEED, numRuns: 400, endOnFailure: true },
    );
  });

  it.each(TOOLS)('answers fuzzed %s arguments with a result or a documented tool error, storing nothing when refused', async (tool) => {
    const declared = new Set(fieldsOf(tool));
    await fc.assert(
      fc.asyncProperty(argumentsFor(tool, () => known), async (args) => {
        const body = toJson({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } });
        const answer = await exercise(body);
        // An argument the tool does not declare (an own "__proto__" included) is always refused as such.
        const unknown = Object.keys(args).filter((key) => !declared.has(key));
        if (unknown.length > 0) {
          const result = (answer.body as { result: { structuredContent: { error?: { code: string; message: string } } } }).result;
          expect(result.structuredContent.error, body).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining(`"${unknown[0]}"`) });
        }
      }),
      { seed: SEED + TOOLS.indexOf(tool), numRuns: 150, endOnFailure: true },
    );
  });

  it('answers bodies beyond MaxBodyBytes with 413 and keeps serving', async () => {
    await exercise(toJson({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'remember', arguments: { text: 'x'.repeat(server.config.http.maxBodyBytes) } } }));
  });
});

describe.each(engines)('fuzzing the tools with the real local model on %s', (engine: Engine) => {
  let server: TestServer;
  let token: string;
  const subject = `fuzz-model-${Date.now()}`;

  beforeAll(async () => {
    server = await startTestServer({ engine, embedder: sharedLocalEmbedder(), env: { MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '0' } });
    token = await server.token(subject);
  });
  afterAll(async () => {
    await server.close();
  });

  it('keeps the same properties for remember and recall when the model embeds the text', async () => {
    const known: number[] = [];
    for (const tool of ['remember', 'recall'] as const) {
      const call = argumentsFor(tool, () => known).map((args) => toJson({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } }));
      await fc.assert(
        fc.asyncProperty(call, async (body) => {
          const response = await server.post(body, { authorization: `Bearer ${token}` });
          const answer = { status: response.status, body: (await response.json()) as unknown };
          checkAnswer(answer, body);
          const ping = await server.post('{"jsonrpc":"2.0","id":0,"method":"ping"}', { authorization: `Bearer ${token}` });
          expect(ping.status).toBe(200);
        }),
        { seed: SEED + 100, numRuns: 12, endOnFailure: true },
      );
    }
  });
});
