import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Strings and timestamps the database cannot hold alike on both engines are refused as INVALID_INPUT naming
 * the argument, before anything is embedded or stored; and an own "__proto__" argument is an unknown argument.
 */
let counter = 0;
const newSubject = () => `hygiene-${Date.now()}-${counter++}`;

const NUL = 'must not contain U+0000 (NUL)';
const LONE = 'is not valid Unicode (lone surrogate)';
const RANGE = 'must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z once its offset is applied';

describe.each(engines)('input hygiene on %s', (engine) => {
  let server: TestServer;
  let subject: string;
  let token: string;
  let existingId: number;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    subject = newSubject();
    token = await server.token(subject);
    existingId = (await server.call(token, 'remember', { text: 'The user keeps bees on the roof' })).structured.memory_id as number;
  });
  afterAll(async () => {
    await server.close();
  });

  /** Everything the subject has stored: memories and tombstones, whole rows. */
  const state = () =>
    server.service.db.withSubject(subject, 'inspecting rows', async (trx) => ({
      memories: await trx.selectFrom('memories').select(['id', 'text', 'tags', 'source_provider', 'session_id', 'last_confirmed_at', 'expires_at']).orderBy('id').execute(),
      tombstones: await trx.selectFrom('tombstones').select(['memory_id', 'text']).orderBy('id').execute(),
    }));

  const refusals: [string, string, (bad: string) => Record<string, unknown>, string][] = [
    ['remember', 'text', (bad) => ({ text: `The user likes ${bad} tea` }), 'text'],
    ['remember', 'tags', (bad) => ({ text: 'The user likes tea', tags: ['ok', `t${bad}`] }), 'tags[1]'],
    ['remember', 'source_provider', (bad) => ({ text: 'The user likes tea', source_provider: `gpt${bad}` }), 'source_provider'],
    ['remember', 'session_id', (bad) => ({ text: 'The user likes tea', session_id: `s${bad}` }), 'session_id'],
    ['recall', 'query', (bad) => ({ query: `tea${bad}` }), 'query'],
    ['recall', 'tags filter', (bad) => ({ query: 'tea', tags: [`t${bad}`] }), 'tags[0]'],
    ['recall', 'session_id filter', (bad) => ({ query: 'tea', session_id: `s${bad}` }), 'session_id'],
    ['recall', 'source_provider filter', (bad) => ({ query: 'tea', source_provider: `p${bad}` }), 'source_provider'],
    ['list_memories', 'cursor', (bad) => ({ cursor: `c${bad}` }), 'cursor'],
    ['list_memories', 'session_id filter', (bad) => ({ session_id: `s${bad}` }), 'session_id'],
    ['forget', 'reason', (bad) => ({ memory_id: existingId, reason: `asked${bad}` }), 'reason'],
    ['correct', 'text', (bad) => ({ memory_id: existingId, text: `The user keeps ${bad} bees` }), 'text'],
    ['correct', 'reason', (bad) => ({ memory_id: existingId, text: 'The user keeps wasps', reason: `moved${bad}` }), 'reason'],
    ['correct', 'tags', (bad) => ({ memory_id: existingId, text: 'The user keeps wasps', tags: [`t${bad}`] }), 'tags[0]'],
  ];

  const badStrings: [string, string, string][] = [
    ['U+0000', '\u0000', NUL],
    ['a lone high surrogate', '\uD800x', LONE],
    ['a lone low surrogate', 'x\uDC00', LONE],
  ];

  for (const [label, bad, rule] of badStrings) {
    it.each(refusals)(`refuses ${label} in %s's %s as INVALID_INPUT naming the argument, changing nothing`, async (tool, _field, args, argument) => {
      const before = await state();
      const { isError, structured } = await server.call(token, tool, args(bad));
      expect(isError).toBe(true);
      expect(structured).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: `${argument}: ${rule}` } });
      expect(await state()).toEqual(before);
    });
  }

  it('accepts well-formed astral characters (surrogate pairs) and stores them unchanged', async () => {
    const text = 'The user signs messages with 🐝 and 𝄞';
    const { isError, structured } = await server.call(token, 'remember', { text, tags: ['🐝'], dedup_policy: 'insert' });
    expect(isError).toBe(false);
    const stored = (await state()).memories.find((row) => Number(row.id) === structured.memory_id);
    expect(stored).toMatchObject({ text, tags: ['🐝'] });
  });

  describe('timestamps: years 0001 to 9999 in UTC, the same answer on both engines', () => {
    const accepted: [string, string, string][] = [
      ['the first instant of year 0001', '0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
      ['year 0001 reached through a negative offset', '0000-12-31T23:30:00-00:30', '0001-01-01T00:00:00.000Z'],
      ['a time in year 0001 with a positive offset', '0001-01-01T02:00:00+01:00', '0001-01-01T01:00:00.000Z'],
    ];
    it.each(accepted)('stores last_confirmed_at at %s and reads it back exactly', async (_name, value, iso) => {
      const { isError, structured } = await server.call(token, 'remember', { text: `The user found a coin (${value})`, last_confirmed_at: value, dedup_policy: 'insert' });
      expect(isError, JSON.stringify(structured)).toBe(false);
      const row = (await state()).memories.find((memory) => Number(memory.id) === structured.memory_id);
      expect(row!.last_confirmed_at.toISOString()).toBe(iso);
    });

    it('stores expires_at at the last millisecond of year 9999, also reached through an offset', async () => {
      for (const [value, iso] of [
        ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
        ['9999-12-31T23:59:59+00:00', '9999-12-31T23:59:59.000Z'],
        ['9999-12-31T23:59:59+05:00', '9999-12-31T18:59:59.000Z'],
      ] as const) {
        const { isError, structured } = await server.call(token, 'remember', { text: `The user plans far ahead (${value})`, expires_at: value, dedup_policy: 'insert' });
        expect(isError, `${value}: ${JSON.stringify(structured)}`).toBe(false);
        const row = (await state()).memories.find((memory) => Number(memory.id) === structured.memory_id);
        expect(row!.expires_at!.toISOString()).toBe(iso);
      }
    });

    const refused: [string, Record<string, unknown>, string][] = [
      ['year 0000', { last_confirmed_at: '0000-06-01T00:00:00Z' }, 'last_confirmed_at'],
      ['the last instant of year 0000', { last_confirmed_at: '0000-12-31T23:59:59.999Z' }, 'last_confirmed_at'],
      ['year 0001 pushed into year 0000 by its offset', { last_confirmed_at: '0001-01-01T00:30:00+01:00' }, 'last_confirmed_at'],
      ['year 9999 pushed into year 10000 by its offset', { expires_at: '9999-12-31T23:59:59-00:01' }, 'expires_at'],
      ['year 9999 late in the day with a negative offset', { expires_at: '9999-12-31T23:00:00-02:00' }, 'expires_at'],
    ];
    it.each(refused)('refuses %s with INVALID_INPUT, storing nothing', async (_name, extra, argument) => {
      const before = await state();
      const { isError, structured } = await server.call(token, 'remember', { text: 'The user collects old coins', dedup_policy: 'insert', ...extra });
      expect(isError).toBe(true);
      expect(structured).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: `${argument}: ${RANGE}` } });
      expect(await state()).toEqual(before);
    });

    it('refuses an ISO year of five digits as not a timestamp', async () => {
      const { structured } = await server.call(token, 'remember', { text: 'The user collects old coins', expires_at: '+010000-01-01T00:00:00Z' });
      expect(structured).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: expect.stringMatching(/^expires_at: must be an ISO 8601 timestamp/) } });
    });

    it('checks the filters of recall and list_memories the same way', async () => {
      for (const [tool, args, argument] of [
        ['recall', { query: 'coins', created_after: '0000-01-01T00:00:00Z' }, 'created_after'],
        ['recall', { query: 'coins', created_before: '9999-12-31T23:59:59-01:00' }, 'created_before'],
        ['list_memories', { created_after: '0001-01-01T00:00:00+00:01' }, 'created_after'],
        ['list_memories', { created_before: '9999-12-31T23:59:59.999-00:01' }, 'created_before'],
      ] as const) {
        const { structured } = await server.call(token, tool, args);
        expect(structured, `${tool} ${JSON.stringify(args)}`).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: `${argument}: ${RANGE}` } });
      }
      for (const [tool, args] of [
        ['recall', { query: 'coins', created_after: '0001-01-01T00:00:00Z', created_before: '9999-12-31T23:59:59.999Z' }],
        ['list_memories', { created_after: '0001-01-01T00:00:00Z', created_before: '9999-12-31T23:59:59.999Z' }],
      ] as const) {
        const { isError, structured } = await server.call(token, tool, args);
        expect(isError, JSON.stringify(structured)).toBe(false);
        expect((structured.memories as unknown[]).length).toBeGreaterThan(0);
      }
    });

    it('refuses a forged list cursor positioned in year 0000 as not a cursor', async () => {
      const cursor = Buffer.from(JSON.stringify(['0000-01-01T00:00:00.000000Z', 1])).toString('base64url');
      const { structured } = await server.call(token, 'list_memories', { cursor });
      expect(structured).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: 'cursor: is not a cursor returned by list_memories' } });
    });
  });

  describe('an own "__proto__" argument (JSON.parse makes one) is an unknown argument', () => {
    const rawCall = async (name: string, argumentsJson: string) => {
      const response = await server.post(
        `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${name}","arguments":${argumentsJson}}}`,
        { authorization: `Bearer ${token}` },
      );
      expect(response.status).toBe(200);
      return ((await response.json()) as { result: { isError?: boolean; structuredContent: unknown } }).result;
    };

    it.each([
      ['remember', '{"text":"The user owns a kayak","__proto__":{"dedup_policy":"insert"}}'],
      ['remember', '{"__proto__":null,"text":"The user owns a kayak"}'],
      ['recall', '{"query":"kayak","__proto__":{}}'],
      ['list_memories', '{"__proto__":[]}'],
      ['forget', '{"memory_id":1,"__proto__":"x"}'],
      ['confirm', '{"memory_id":1,"__proto__":{"memory_id":2}}'],
    ])('%s refuses %s', async (name, argumentsJson) => {
      const before = await state();
      const result = await rawCall(name, argumentsJson);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: expect.stringContaining('unknown argument "__proto__"') } });
      expect(await state()).toEqual(before);
    });

    it('refuses other Object.prototype names as unknown arguments too', async () => {
      const result = await rawCall('remember', '{"text":"The user owns a kayak","constructor":{"name":"x"},"toString":"y"}');
      expect(result.structuredContent).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: 'unknown arguments "constructor", "toString"' } });
    });
  });
});
