import { embeddingError } from '../../src/errors.js';
import { SpaceService, SUBJECTS_AS_NAMES } from '../../src/spaces/space-service.js';
import type { EmbeddingProvider } from '../../src/embeddings/provider.js';
import type { Engine } from './engines.js';
import { sharedLocalEmbedder } from './shared.js';
import { startTestServer } from './test-server.js';

/**
 * A scripted session that calls every tool over HTTP in every shape its answer can take (each success variant and
 * each error code a tool can return) and records the whole JSON-RPC `result` of every call. The wire-compatibility
 * test compares it with a recorded golden file; the output-schema test validates every structuredContent.
 */
export interface RecordedCall {
  readonly step: string;
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  readonly result: WireResult;
}

export interface WireResult {
  readonly content: { type: string; text: string }[];
  readonly structuredContent: Record<string, unknown>;
  readonly isError?: boolean;
}

/** Fixed instants sent as arguments: far from now, so they are kept verbatim (see normaliseResult). */
const FAR_FUTURE = '2999-01-01T00:00:00Z';
const LONG_AGO = '2020-01-02T03:04:05Z';
const UNKNOWN_ID = 987_654_321;
/** MaxBytesPerSubject in the scenario: above what every other subject writes. */
const QUOTA_BYTES = 100_000;

export async function runWireScenario(engine: Engine): Promise<RecordedCall[]> {
  let failEmbedding = false;
  const real = sharedLocalEmbedder();
  const embedder: EmbeddingProvider = {
    get model() {
      return real.model;
    },
    get dimensions() {
      return real.dimensions;
    },
    // The local model, made to fail on demand like an unreachable OpenAI-compatible server.
    embed: (texts) => (failEmbedding ? Promise.reject(embeddingError('embedding provider at http://127.0.0.1:9/v1 is unreachable (ECONNREFUSED)')) : real.embed(texts)),
    ready: () => real.ready(),
    close: async () => undefined,
  };
  // A quota of bytes that only the subject of the QUOTA_EXCEEDED steps reaches.
  const server = await startTestServer({ engine, embedder, env: { MEMORY_SERVICE_MAX_BYTES_PER_SUBJECT: String(QUOTA_BYTES) } });
  const calls: RecordedCall[] = [];
  let nextId = 1;
  try {
    const tokens = new Map<string, string>();
    const call = async (subject: string, step: string, tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      let token = tokens.get(subject);
      if (token === undefined) tokens.set(subject, (token = await server.token(subject)));
      const response = await server.post(
        { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: tool, arguments: args } },
        { authorization: `Bearer ${token}` },
      );
      const body = (await response.json()) as { result?: WireResult };
      if (response.status !== 200 || body.result === undefined) throw new Error(`${step}: HTTP ${response.status} ${JSON.stringify(body)}`);
      calls.push({ step, tool, arguments: args, result: body.result });
      return body.result.structuredContent;
    };
    const id = (structured: Record<string, unknown>) => structured.memory_id as number;

    // remember: every dedup policy and every optional part of the answer.
    const a = 'golden-a';
    const allergy = await call(a, 'remember: ask, nothing similar, every argument', 'remember', {
      text: 'The user is allergic to penicillin',
      tags: ['Health', '#Allergies', 'health'],
      source_provider: 'golden-client',
      importance: 0.9,
      capture_mode: 'explicit',
      session_id: 'session-1',
      expires_at: FAR_FUTURE,
      last_confirmed_at: LONG_AGO,
    });
    await call(a, 'remember: ask, one near-duplicate', 'remember', { text: 'The user is allergic to penicillin', dedup_policy: null });
    await call(a, 'remember: skip_if_near, the same fact (already stored)', 'remember', { text: 'The user is allergic to penicillin', dedup_policy: 'skip_if_near' });
    await call(a, 'remember: skip_if_near, a near text stating another fact (inserted)', 'remember', {
      text: 'The user is allergic to penicillin since 2019',
      dedup_policy: 'skip_if_near',
    });
    await call(a, 'remember: skip_if_near, nothing near (inserted)', 'remember', { text: 'The user plays the cello every Sunday', dedup_policy: 'skip_if_near' });
    const oatMilk = await call(a, 'remember: insert', 'remember', { text: 'The user drinks oat milk', dedup_policy: 'insert', tags: ['food'] });

    // forget, then remember the forgotten fact: previously_corrected with the note.
    await call(a, 'forget: with a reason', 'forget', { memory_id: id(oatMilk), reason: 'user asked' });
    await call(a, 'remember: previously_corrected (forgotten, with note)', 'remember', { text: 'The user drinks oat milk', dedup_policy: 'insert' });
    await call(a, 'forget: the same memory again (NOT_FOUND)', 'forget', { memory_id: id(oatMilk) });

    // correct, then remember the old fact: previously_corrected with replaced_by.
    const lisbon = await call(a, 'remember: a fact to correct', 'remember', { text: 'The user lives in Lisbon', tags: ['home'], importance: 0.7 });
    await call(a, 'correct: with a reason and new fields', 'correct', {
      memory_id: id(lisbon),
      text: 'The user moved to Porto in 2025',
      reason: 'moved',
      session_id: 'session-2',
      capture_mode: 'inferred',
      source_provider: 'golden-client',
      expires_at: FAR_FUTURE,
    });
    await call(a, 'remember: previously_corrected (corrected, replaced_by)', 'remember', { text: 'The user lives in Lisbon' });
    await call(a, 'correct: an unknown memory (NOT_FOUND)', 'correct', { memory_id: UNKNOWN_ID, text: 'The user lives in Braga' });
    await call(a, 'correct: without a reason, tags cleared', 'correct', { memory_id: id(allergy), text: 'The user is allergic to penicillin and amoxicillin', tags: [] });

    // confirm.
    const portuguese = await call(a, 'remember: a fact to confirm', 'remember', { text: 'The user speaks Portuguese fluently', dedup_policy: 'insert' });
    await call(a, 'confirm', 'confirm', { memory_id: id(portuguese) });
    await call(a, 'confirm: an unknown memory (NOT_FOUND)', 'confirm', { memory_id: UNKNOWN_ID });

    // recall: plain, cut by limit, cut by max_chars (with a truncated text), filters, nothing found.
    await call(a, 'recall: default arguments', 'recall', { query: 'penicillin allergy' });
    await call(a, 'recall: cut by limit', 'recall', { query: 'penicillin', limit: 1 });
    const b = 'golden-b';
    await call(b, 'remember: a long memory', 'remember', { text: `The user keeps a travel diary: ${'Lisbon, Porto, Braga, Faro and Coimbra. '.repeat(12)}`.trim(), dedup_policy: 'insert' });
    await call(b, 'remember: a short memory', 'remember', { text: 'The user keeps a paper travel diary', dedup_policy: 'insert', tags: ['travel'] });
    await call(b, 'recall: the first match longer than max_chars (truncated)', 'recall', { query: 'travel diary Lisbon Porto Braga Faro Coimbra', max_chars: 200 });
    await call(b, 'recall: cut by max_chars after the first', 'recall', { query: 'paper travel diary', max_chars: 200, limit: 5 });
    await call(b, 'recall: filters (tags all, dates)', 'recall', {
      query: 'travel diary',
      tags: ['Travel'],
      tag_match: 'all',
      created_after: LONG_AGO,
      created_before: FAR_FUTURE,
    });
    await call(b, 'recall: nothing matches the filters', 'recall', { query: 'travel diary', session_id: 'no-such-session' });
    await call('golden-empty', 'recall: nothing stored', 'recall', { query: 'anything at all' });

    // list_memories: pages with next_cursor, the last page, max_chars, filters, empty.
    const firstPage = await call(a, 'list_memories: first page', 'list_memories', { limit: 2 });
    const secondPage = await call(a, 'list_memories: second page', 'list_memories', { limit: 2, cursor: firstPage.next_cursor });
    await call(a, 'list_memories: last page', 'list_memories', { limit: 50, cursor: secondPage.next_cursor });
    await call(a, 'list_memories: filtered by tag, include_expired', 'list_memories', { tags: ['home'], include_expired: true });
    await call(b, 'list_memories: cut by max_chars', 'list_memories', { max_chars: 200 });
    await call(b, 'list_memories: nothing matches the filters', 'list_memories', { capture_mode: 'inferred' });
    await call('golden-empty', 'list_memories: nothing stored', 'list_memories', {});
    const c = 'golden-c';
    const dog = await call(c, 'remember: a first memory', 'remember', { text: 'The user has a dog named Biscuit', dedup_policy: 'insert' });
    await call(c, 'remember: a second memory', 'remember', { text: 'The user grows tomatoes on the balcony', dedup_policy: 'insert' });
    const page = await call(c, 'list_memories: the newest memory, before the older one is forgotten', 'list_memories', { limit: 1 });
    await call(c, 'forget: without a reason', 'forget', { memory_id: id(dog) });
    await call(c, 'list_memories: no more memories after the cursor', 'list_memories', { limit: 1, cursor: page.next_cursor });

    // brief: grouped by tag with recall counts, cut by max_chars, nothing stored.
    await call(a, 'brief: default arguments', 'brief', {});
    await call(b, 'brief: cut by max_chars (the long memory shortened)', 'brief', { max_chars: 200 });
    await call('golden-empty', 'brief: nothing stored', 'brief', {});

    // Spaces: a shared space with a reader, several spaces at once, and the refusals (made through the service:
    // no tool makes or shares a space).
    const spaces = new SpaceService(server.service.db, SUBJECTS_AS_NAMES);
    const family = await spaces.create(a, 'Family');
    const reader = 'golden-reader';
    await spaces.share(a, family.id, reader, 'reader');
    await call(a, 'spaces: the personal space and one it owns', 'spaces', {});
    await call(reader, 'spaces: a reader of a shared space', 'spaces', {});
    await call('golden-empty', 'spaces: only the personal space', 'spaces', {});
    const dinner = await call(a, 'remember: into a shared space by name', 'remember', { text: 'The family eats dinner together on Fridays', space: 'Family', dedup_policy: 'insert' });
    await call(a, 'recall: several spaces at once', 'recall', { query: 'dinner together on Fridays', space: ['personal', 'Family'] });
    await call(reader, 'recall: a shared space by id', 'recall', { query: 'family dinner', space: family.id });
    await call(reader, 'list_memories: a shared space', 'list_memories', { space: 'family' });
    await call(reader, 'brief: a shared space', 'brief', { space: 'Family' });
    await call(a, 'confirm: in the space named', 'confirm', { memory_id: id(dinner), space: 'Family' });
    await call(reader, 'remember: a reader writes (FORBIDDEN)', 'remember', { text: 'The family has a cat', space: 'Family' });
    await call(reader, 'correct: a reader corrects (FORBIDDEN)', 'correct', { memory_id: id(dinner), text: 'The family eats dinner together on Saturdays' });
    await call(reader, 'forget: a reader forgets (FORBIDDEN)', 'forget', { memory_id: id(dinner) });
    await call(reader, 'confirm: a reader confirms (FORBIDDEN)', 'confirm', { memory_id: id(dinner) });
    const unknownSpace = `space:${'q'.repeat(24)}`;
    await call(a, 'remember: an unknown space (NOT_FOUND)', 'remember', { text: 'The user likes tea', space: unknownSpace });
    await call(a, 'recall: an unknown space name (NOT_FOUND)', 'recall', { query: 'tea', space: 'Work' });
    await call(a, 'list_memories: an unknown space (NOT_FOUND)', 'list_memories', { space: unknownSpace });
    await call(a, 'brief: an unknown space name (NOT_FOUND)', 'brief', { space: 'Work' });
    await call(reader, 'confirm: a memory of another space named (NOT_FOUND)', 'confirm', { memory_id: id(dinner), space: 'personal' });
    // A token limited to the shared space: the personal space is out of its reach.
    const limited = 'golden-a, a token for Family only';
    tokens.set(limited, await server.token(a, { scope: `memory:read memory:write ${family.id}` }));
    await call(limited, 'recall: the personal space with a token limited to another (FORBIDDEN)', 'recall', { query: 'penicillin' });
    await call(limited, 'list_memories: the personal space with a token limited to another (FORBIDDEN)', 'list_memories', {});
    await call(limited, 'brief: the personal space with a token limited to another (FORBIDDEN)', 'brief', {});
    await call(limited, 'spaces: a token limited to one space', 'spaces', {});
    await call(a, 'spaces: an unknown argument', 'spaces', { name: 'Family' });

    // INVALID_INPUT from every tool: schema errors and the tools' own checks.
    await call(a, 'remember: unknown argument', 'remember', { text: 'The user likes tea', colour: 'green' });
    await call(a, 'remember: blank text and a bad importance', 'remember', { text: '   ', importance: 2 });
    await call(a, 'remember: expires_at in the past', 'remember', { text: 'The user likes tea', expires_at: LONG_AGO });
    await call(a, 'remember: last_confirmed_at in the future', 'remember', { text: 'The user likes tea', last_confirmed_at: FAR_FUTURE });
    await call(a, 'remember: an empty tag', 'remember', { text: 'The user likes tea', tags: ['ok', ' # '] });
    await call(a, 'recall: missing query', 'recall', {});
    await call(a, 'recall: created_before not after created_after', 'recall', { query: 'tea', created_after: FAR_FUTURE, created_before: LONG_AGO });
    await call(a, 'recall: limit out of range', 'recall', { query: 'tea', limit: 51 });
    await call(a, 'list_memories: a cursor it never returned', 'list_memories', { cursor: 'not-a-cursor' });
    await call(a, 'list_memories: a wrong type', 'list_memories', { include_expired: 'yes' });
    await call(a, 'forget: memory_id not an integer', 'forget', { memory_id: 'seven' });
    await call(a, 'correct: missing text', 'correct', { memory_id: 1 });
    await call(a, 'correct: expires_at in the past', 'correct', { memory_id: 1, text: 'The user likes tea', expires_at: LONG_AGO });
    await call(a, 'confirm: missing memory_id', 'confirm', {});
    await call(a, 'brief: max_chars out of range', 'brief', { max_chars: 100_000 });

    // SECRET_REJECTED: text and reason.
    await call(a, 'remember: a secret', 'remember', { text: 'My OpenAI key is sk-proj-Q3rT9vXb2LmN8pKd4WfYh6ZcJ1sAeUoR5tGi7HnBqV0xMz' });
    await call(a, 'correct: a secret text', 'correct', { memory_id: id(portuguese), text: 'The wifi password is Tr0ub4dor&3x' });
    await call(a, 'correct: a secret reason', 'correct', { memory_id: id(portuguese), text: 'The user speaks Portuguese', reason: 'token ghp_abcdefghijklmnopqrstuvwxyz0123456789' });
    await call(a, 'forget: a secret reason', 'forget', { memory_id: id(portuguese), reason: 'password: hunter22!' });

    // QUOTA_EXCEEDED: a subject near its quota of bytes (filled without recording) remembers, and corrects a short
    // memory into a long one.
    const full = 'golden-quota';
    const fullToken = await server.token(full);
    const sentence = (n: number) => `On day ${n} of the long diary the user walked along the river and noted the birds. `;
    for (let part = 0; part < 6; part += 1) {
      const text = Array.from({ length: 190 }, (_, n) => sentence(part * 1000 + n)).join('').slice(0, 16_000);
      await server.call(fullToken, 'remember', { text, dedup_policy: 'insert' });
    }
    const short = await call(full, 'remember: a short fact within the quota', 'remember', { text: 'The user likes tea', dedup_policy: 'insert' });
    const long = Array.from({ length: 80 }, (_, n) => sentence(9000 + n)).join('');
    await call(full, 'remember: past the quota of bytes (QUOTA_EXCEEDED)', 'remember', { text: long, dedup_policy: 'insert' });
    await call(full, 'correct: past the quota of bytes (QUOTA_EXCEEDED)', 'correct', { memory_id: id(short), text: long });

    // EMBEDDING_ERROR: every tool that embeds.
    failEmbedding = true;
    try {
      await call(a, 'remember: the embedding provider fails', 'remember', { text: 'The user likes green tea' });
      await call(a, 'recall: the embedding provider fails', 'recall', { query: 'tea' });
      await call(a, 'correct: the embedding provider fails', 'correct', { memory_id: id(portuguese), text: 'The user speaks Portuguese and Spanish' });
    } finally {
      failEmbedding = false;
    }

    // DATABASE_ERROR: every tool, with the memories and spaces tables gone for this schema.
    await server.admin('alter table memories rename to memories_away');
    await server.admin('alter table spaces rename to spaces_away');
    try {
      await call(a, 'remember: the database fails', 'remember', { text: 'The user likes green tea' });
      await call(a, 'recall: the database fails', 'recall', { query: 'tea' });
      await call(a, 'list_memories: the database fails', 'list_memories', {});
      await call(a, 'forget: the database fails', 'forget', { memory_id: id(portuguese) });
      await call(a, 'correct: the database fails', 'correct', { memory_id: id(portuguese), text: 'The user speaks Portuguese and Spanish' });
      await call(a, 'confirm: the database fails', 'confirm', { memory_id: id(portuguese) });
      await call(a, 'brief: the database fails', 'brief', {});
      await call(a, 'spaces: the database fails', 'spaces', {});
    } finally {
      await server.admin('alter table spaces_away rename to spaces');
      await server.admin('alter table memories_away rename to memories');
    }
    return calls;
  } finally {
    await server.close();
  }
}

/**
 * Replaces the values that differ from run to run with placeholders that still say what was there: ids become
 * `<id:N>` (N numbers the distinct ids in order of appearance, so the same memory keeps its name), timestamps near
 * now `<iso>`, list cursors `<cursor>`, similarity and score `<number>`. Each is checked on the way (an id is a
 * positive integer, a timestamp a full ISO string, a score a number in [0, 1] rounded to 4 decimals), and the text
 * content is normalised the same way so it stays comparable byte for byte.
 */
export function normaliseCalls(calls: readonly RecordedCall[]): unknown[] {
  // Shared spaces' ids are random: each becomes <space:N>, wherever it is (arguments, answers, messages).
  const spaceIds = new Map<string, string>();
  const named = JSON.stringify(calls).replace(/space:[a-z0-9]{24}/g, (key) => {
    let name = spaceIds.get(key);
    if (name === undefined) spaceIds.set(key, (name = `<space:${spaceIds.size + 1}>`));
    return name;
  });
  return normaliseIds(JSON.parse(named) as RecordedCall[]);
}

function normaliseIds(calls: readonly RecordedCall[]): unknown[] {
  const ids = new Map<number, string>();
  const idName = (value: unknown): string => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new Error(`not an id: ${JSON.stringify(value)}`);
    if (value === UNKNOWN_ID) return String(value);
    let name = ids.get(value);
    if (name === undefined) ids.set(value, (name = `<id:${ids.size + 1}>`));
    return name;
  };
  const idsInText = (text: string): string => text.replace(/\bmemory (\d+)/g, (_match, digits: string) => `memory ${idName(Number(digits))}`);
  const value = (key: string, input: unknown): unknown => {
    if (Array.isArray(input)) return input.map((item) => value('', item));
    if (typeof input === 'object' && input !== null) {
      return Object.fromEntries(Object.entries(input).map(([name, child]) => [name, value(name, child)]));
    }
    if (['memory_id', 'replaced_memory_id', 'replaced_by'].includes(key)) return idName(input);
    if (key === 'similarity' || key === 'score') {
      if (typeof input !== 'number' || input < 0 || input > 1 || Math.round(input * 10_000) / 10_000 !== input) {
        throw new Error(`${key} is not a number in [0, 1] rounded to 4 decimals: ${JSON.stringify(input)}`);
      }
      return '<number>';
    }
    if (key === 'next_cursor' && input !== null) {
      if (typeof input !== 'string' || !/^[A-Za-z0-9_-]{10,200}$/.test(input)) throw new Error(`not a cursor: ${JSON.stringify(input)}`);
      return '<cursor>';
    }
    if (typeof input === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(input)) {
      return Math.abs(Date.parse(input) - Date.now()) < 86_400_000 ? '<iso>' : input;
    }
    if (key === 'message' && typeof input === 'string') return idsInText(input);
    return input;
  };
  return calls.map((call) => {
    const { content, structuredContent, ...rest } = call.result;
    return {
      step: call.step,
      tool: call.tool,
      result: {
        content: content.map((block) => {
          if (call.result.isError === true) return { ...block, text: idsInText(block.text) };
          // A success's text is the JSON of structuredContent: normalised as JSON, key order kept.
          return { ...block, text: JSON.stringify(value('', JSON.parse(block.text))) };
        }),
        structuredContent: value('', structuredContent),
        ...rest,
      },
    };
  });
}
