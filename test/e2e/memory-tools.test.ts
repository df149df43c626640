import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let subjectCounter = 0;
const newSubject = () => `tools-${Date.now()}-${subjectCounter++}`;
const hour = 3600_000;

describe.each(engines)('forget, correct, confirm and list_memories on %s', (engine) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ engine });
  });
  afterAll(async () => {
    await server.close();
  });

  /** A subject with a token and shorthand calls. */
  async function user() {
    const subject = newSubject();
    const token = await server.token(subject);
    const call = (tool: string, args: Record<string, unknown>) => server.call(token, tool, args);
    const ok = async (tool: string, args: Record<string, unknown>) => {
      const { isError, structured } = await call(tool, args);
      expect(isError, JSON.stringify(structured)).toBe(false);
      return structured;
    };
    const remember = async (text: string, extra: Record<string, unknown> = {}) =>
      (await ok('remember', { text, dedup_policy: 'insert', ...extra })).memory_id as number;
    const recalledIds = async (query: string) =>
      ((await ok('recall', { query, limit: 50 })).memories as { memory_id: number }[]).map((memory) => memory.memory_id);
    const memories = () =>
      server.service.db.withSubject(subject, 'inspecting rows', (trx) =>
        trx.selectFrom('memories').select(['id', 'text', 'tags', 'importance', 'source_provider', 'capture_mode', 'session_id', 'expires_at', 'last_confirmed_at']).orderBy('id').execute(),
      );
    const tombstones = () =>
      server.service.db.withSubject(subject, 'inspecting rows', (trx) =>
        trx.selectFrom('tombstones').select(['memory_id', 'text', 'tags', 'reason', 'replaced_by', 'note']).orderBy('id').execute(),
      );
    return { subject, token, call, ok, remember, recalledIds, memories, tombstones };
  }

  const notFound = (id: number) => ({ ok: false, error: { code: 'NOT_FOUND', message: `memory ${id} not found` } });

  describe('forget', () => {
    it('removes the memory from recall and list, and keeps a tombstone with the reason', async () => {
      const u = await user();
      const id = await u.remember('The user lives in Lisbon', { tags: ['home'] });
      const other = await u.remember('The user likes sardines');
      expect(await u.ok('forget', { memory_id: id, reason: 'user asked' })).toEqual({
        ok: true,
        memory_id: id,
        space: { id: 'personal', name: 'Personal' },
        message: 'Forgotten; it will not be recalled again',
      });
      expect(await u.recalledIds('Lisbon')).toEqual([other]);
      expect(((await u.ok('list_memories', {})).memories as { memory_id: number }[]).map((memory) => memory.memory_id)).toEqual([other]);
      const tombstones = await u.tombstones();
      expect(tombstones).toHaveLength(1);
      expect(tombstones[0]).toMatchObject({ text: 'The user lives in Lisbon', tags: ['home'], reason: 'forgotten', replaced_by: null, note: 'user asked' });
      expect(Number(tombstones[0]!.memory_id)).toBe(id);
      // The full-text index (memory_terms) goes with the memory.
      const terms = await server.service.db.withSubject(u.subject, 'inspecting rows', (trx) =>
        trx.selectFrom('memory_terms').select(['memory_id', 'lexeme']).orderBy('lexeme').execute(),
      );
      expect(terms.filter((row) => Number(row.memory_id) === id)).toEqual([]);
      expect(terms.filter((row) => Number(row.memory_id) === other).map((row) => row.lexeme)).toEqual(['like', 'sardin', 'user']);
      // And the subject's memory count (subject_stats) follows inserts and deletes.
      const stats = await server.service.db.withSubject(u.subject, 'inspecting rows', (trx) => trx.selectFrom('subject_stats').select('memories').execute());
      expect(stats.map((row) => Number(row.memories))).toEqual([1]);
    });

    it('is NOT_FOUND the second time, and changes nothing', async () => {
      const u = await user();
      const id = await u.remember('The user owns a kayak');
      await u.ok('forget', { memory_id: id });
      const again = await u.call('forget', { memory_id: id });
      expect(again).toEqual({ isError: true, structured: notFound(id) });
      expect(await u.tombstones()).toHaveLength(1);
    });

    it('feeds remember\'s previously_corrected', async () => {
      const u = await user();
      const id = await u.remember('The user is a vegetarian');
      await u.ok('forget', { memory_id: id, reason: 'started eating fish' });
      const again = await u.ok('remember', { text: 'The user is a vegetarian' });
      expect(again.previously_corrected).toEqual([
        { memory_id: id, text: 'The user is a vegetarian', reason: 'forgotten', note: 'started eating fish', similarity: expect.any(Number), tombstoned_at: expect.any(String) },
      ]);
    });

    it('refuses a reason that looks like a secret, changing nothing', async () => {
      const u = await user();
      const id = await u.remember('The user has a staging server');
      const { isError, structured } = await u.call('forget', { memory_id: id, reason: 'key sk-proj-Q3rT9vXb2LmN8pKd4WfYh6ZcJ1sAeUoR5tGi7HnBqV0xMz' });
      expect(isError).toBe(true);
      expect(structured).toEqual({ ok: false, error: { code: 'SECRET_REJECTED', message: expect.stringMatching(/^reason looks like a secret/) } });
      expect(await u.memories()).toHaveLength(1);
      expect(await u.tombstones()).toEqual([]);
    });
  });

  describe('correct', () => {
    it('stores the new fact, retires the old one with replaced_by, and carries tags and importance over', async () => {
      const u = await user();
      const old = await u.remember('The user lives in Lisbon', { tags: ['home', 'city'], importance: 0.9, session_id: 'old-session' });
      const result = await u.ok('correct', { memory_id: old, text: 'The user moved to Porto in 2025', reason: 'moved', session_id: 'new-session' });
      expect(result).toEqual({
        ok: true,
        memory_id: expect.any(Number),
        replaced_memory_id: old,
        space: { id: 'personal', name: 'Personal' },
        message: `Corrected; memory ${old} was replaced by memory ${result.memory_id as number}`,
      });
      const newId = result.memory_id as number;
      expect(newId).not.toBe(old);
      const [stored] = await u.memories();
      expect(stored).toMatchObject({ text: 'The user moved to Porto in 2025', tags: ['home', 'city'], importance: 0.9, session_id: 'new-session', expires_at: null });
      expect(Number(stored!.id)).toBe(newId);
      expect(await u.recalledIds('Where does the user live?')).toEqual([newId]);
      const [tombstone] = await u.tombstones();
      expect(tombstone).toMatchObject({ text: 'The user lives in Lisbon', reason: 'corrected', note: 'moved' });
      expect(Number(tombstone!.replaced_by)).toBe(newId);

      // Remembering the old fact again reports the correction.
      const again = await u.ok('remember', { text: 'The user lives in Lisbon' });
      expect(again.previously_corrected).toEqual([
        { memory_id: old, text: 'The user lives in Lisbon', reason: 'corrected', replaced_by: newId, note: 'moved', similarity: expect.any(Number), tombstoned_at: expect.any(String) },
      ]);
    });

    it('replaces tags and importance when given ([] clears the tags)', async () => {
      const u = await user();
      const first = await u.remember('The user drinks black coffee', { tags: ['food'], importance: 0.2 });
      const second = (await u.ok('correct', { memory_id: first, text: 'The user drinks coffee with oat milk', tags: ['#Drinks'], importance: 0.7 })).memory_id as number;
      expect((await u.memories())[0]).toMatchObject({ tags: ['drinks'], importance: 0.7 });
      await u.ok('correct', { memory_id: second, text: 'The user drinks green tea now', tags: [] });
      expect((await u.memories())[0]).toMatchObject({ text: 'The user drinks green tea now', tags: [], importance: 0.7 });
    });

    it('sets last_confirmed_at to now and takes expires_at only from the arguments', async () => {
      const u = await user();
      const expires = new Date(Date.now() + 48 * hour).toISOString();
      const old = await u.remember('The user is in Rome this week', { last_confirmed_at: '2024-01-01T00:00:00Z', expires_at: expires });
      await u.ok('correct', { memory_id: old, text: 'The user is in Florence this week' });
      const [stored] = await u.memories();
      expect(stored!.expires_at).toBeNull();
      expect(Math.abs(stored!.last_confirmed_at.getTime() - Date.now())).toBeLessThan(60_000);
    });

    const invalid: [string, Record<string, unknown>, string, RegExp][] = [
      ['missing memory_id', { text: 'x fact' }, 'INVALID_INPUT', /^memory_id: is required$/],
      ['memory_id as a string', { memory_id: '12', text: 'x fact' }, 'INVALID_INPUT', /^memory_id: must be an integer$/],
      ['memory_id fractional', { memory_id: 1.5, text: 'x fact' }, 'INVALID_INPUT', /^memory_id: must be an integer$/],
      ['memory_id zero', { memory_id: 0, text: 'x fact' }, 'INVALID_INPUT', /^memory_id: must be a positive integer$/],
      ['missing text', { memory_id: 1 }, 'INVALID_INPUT', /^text: is required$/],
      ['blank text', { memory_id: 1, text: '  ' }, 'INVALID_INPUT', /^text: must not be blank$/],
      ['text too long', { memory_id: 1, text: 'a'.repeat(16001) }, 'INVALID_INPUT', /^text: must be at most 16000 characters$/],
      ['importance out of range', { memory_id: 1, text: 'x fact', importance: 2 }, 'INVALID_INPUT', /^importance: must be from 0 to 1$/],
      ['expires_at in the past', { memory_id: 1, text: 'x fact', expires_at: '2020-01-01T00:00:00Z' }, 'INVALID_INPUT', /^expires_at: must be in the future$/],
      ['dedup_policy (not an argument here)', { memory_id: 1, text: 'x fact', dedup_policy: 'ask' }, 'INVALID_INPUT', /^unknown argument "dedup_policy"$/],
      ['a secret as text', { memory_id: 1, text: 'my key is sk-proj-Q3rT9vXb2LmN8pKd4WfYh6ZcJ1sAeUoR5tGi7HnBqV0xMz' }, 'SECRET_REJECTED', /^text looks like a secret/],
    ];

    it.each(invalid)('refuses %s, changing nothing', async (_name, args, code, message) => {
      const u = await user();
      const id = await u.remember('The user has a red bicycle');
      const { isError, structured } = await u.call('correct', { ...args, ...(args.memory_id === 1 ? { memory_id: id } : {}) });
      expect(isError).toBe(true);
      expect(structured).toEqual({ ok: false, error: { code, message: expect.stringMatching(message) } });
      expect((await u.memories()).map((row) => row.text)).toEqual(['The user has a red bicycle']);
      expect(await u.tombstones()).toEqual([]);
    });

    it('is NOT_FOUND for an id that does not exist, storing nothing', async () => {
      const u = await user();
      await u.remember('The user has a red bicycle');
      expect(await u.call('correct', { memory_id: 987654321, text: 'The user has a blue bicycle' })).toEqual({ isError: true, structured: notFound(987654321) });
      expect((await u.memories()).map((row) => row.text)).toEqual(['The user has a red bicycle']);
    });
  });

  describe('confirm', () => {
    it('sets last_confirmed_at to now', async () => {
      const u = await user();
      const id = await u.remember('The user is left-handed', { last_confirmed_at: '2024-06-01T12:00:00Z' });
      const result = await u.ok('confirm', { memory_id: id });
      expect(result).toEqual({ ok: true, memory_id: id, last_confirmed_at: expect.any(String), space: { id: 'personal', name: 'Personal' }, message: 'Confirmed as still true' });
      const confirmed = new Date(result.last_confirmed_at as string).getTime();
      expect(Math.abs(confirmed - Date.now())).toBeLessThan(60_000);
      expect((await u.memories())[0]!.last_confirmed_at.getTime()).toBe(confirmed);
      const recalled = (await u.ok('recall', { query: 'left-handed' })).memories as { last_confirmed_at: string }[];
      expect(recalled[0]!.last_confirmed_at).toBe(result.last_confirmed_at);
    });

    it('is NOT_FOUND for an unknown id', async () => {
      const u = await user();
      expect(await u.call('confirm', { memory_id: 424242424 })).toEqual({ isError: true, structured: notFound(424242424) });
    });
  });

  describe('list_memories', () => {
    type Page = { ok: true; memories: { memory_id: number; text: string; text_truncated?: true }[]; next_cursor: string | null; message: string };

    it('pages through everything newest first, with no gap or repeat, even for equal creation times', async () => {
      const u = await user();
      const ids: number[] = [];
      for (let i = 0; i < 7; i++) ids.push(await u.remember(`The user noted fact number ${i}`));
      // Two memories created in the same instant: the id breaks the tie.
      await server.service.db.withSubject(u.subject, 'inspecting rows', (trx) =>
        sql`update memories set created_at = (select created_at from memories where id = ${ids[3]!}) where id = ${ids[4]!}`.execute(trx),
      );
      const seen: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = (await u.ok('list_memories', { limit: 3, ...(cursor === null ? {} : { cursor }) })) as Page;
        seen.push(...page.memories.map((memory) => memory.memory_id));
        cursor = page.next_cursor;
        pages += 1;
        if (cursor === null) expect(page.message).toMatch(/last page/);
      } while (cursor !== null && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual([...ids].reverse());
    });

    it('applies the filters and hides expired memories unless asked', async () => {
      const u = await user();
      const a = await u.remember('The user plays tennis', { tags: ['sport'], session_id: 's1' });
      const b = await u.remember('The user plays chess', { tags: ['games'], session_id: 's1' });
      const c = await u.remember('The user plays golf', { tags: ['sport'], session_id: 's2', expires_at: new Date(Date.now() + hour).toISOString() });
      await server.service.db.withSubject(u.subject, 'inspecting rows', (trx) => sql`update memories set expires_at = now() - interval '1 minute' where id = ${c}`.execute(trx));
      const list = async (args: Record<string, unknown>) => ((await u.ok('list_memories', args)) as Page).memories.map((memory) => memory.memory_id);
      expect(await list({})).toEqual([b, a]);
      expect(await list({ include_expired: true })).toEqual([c, b, a]);
      expect(await list({ tags: ['sport'] })).toEqual([a]);
      expect(await list({ tags: ['sport'], include_expired: true })).toEqual([c, a]);
      expect(await list({ session_id: 's1', tags: ['games', 'sport'], tag_match: 'any' })).toEqual([b, a]);
      expect(await list({ created_after: new Date(Date.now() + hour).toISOString() })).toEqual([]);
      // An expired memory can still be forgotten (it is listed with include_expired).
      await u.ok('forget', { memory_id: c });
    });

    it('keeps a page within max_chars and continues after it', async () => {
      const u = await user();
      const long = 'The user described the garden: ' + 'roses and tulips '.repeat(20);
      const ids = [await u.remember(long), await u.remember(long + 'again'), await u.remember(long + 'and more')];
      const first = (await u.ok('list_memories', { max_chars: 800 })) as Page;
      expect(first.memories.map((memory) => memory.memory_id)).toEqual([ids[2], ids[1]]);
      expect(first.next_cursor).not.toBeNull();
      const second = (await u.ok('list_memories', { max_chars: 800, cursor: first.next_cursor })) as Page;
      expect(second.memories.map((memory) => memory.memory_id)).toEqual([ids[0]]);
      expect(second.next_cursor).toBeNull();
      const tiny = (await u.ok('list_memories', { max_chars: 200 })) as Page;
      expect(tiny.memories).toHaveLength(1);
      expect(tiny.memories[0]!.text_truncated).toBe(true);
      expect(tiny.memories[0]!.text).toHaveLength(200);
    });

    it.each([
      ['garbage', 'not-a-cursor'],
      ['valid base64 of something else', Buffer.from('{"a":1}').toString('base64url')],
      ['an impossible date', Buffer.from(JSON.stringify(['2024-02-31T00:00:00.000000Z', 5])).toString('base64url')],
      ['a negative id', Buffer.from(JSON.stringify(['2024-02-01T00:00:00.000000Z', -5])).toString('base64url')],
    ])('refuses a cursor that is %s', async (_name, cursor) => {
      const u = await user();
      expect(await u.call('list_memories', { cursor })).toEqual({
        isError: true,
        structured: { ok: false, error: { code: 'INVALID_INPUT', message: 'cursor: is not a cursor returned by list_memories' } },
      });
    });

    it.each([
      ['limit 0', { limit: 0 }, /^limit: must be an integer from 1 to 100$/],
      ['limit 101', { limit: 101 }, /^limit: must be an integer from 1 to 100$/],
      ['include_expired as a string', { include_expired: 'yes' }, /^include_expired: must be true or false$/],
      ['an unknown argument', { query: 'x' }, /^unknown argument "query"$/],
    ])('refuses %s with INVALID_INPUT', async (_name, args, message) => {
      const u = await user();
      const { isError, structured } = await u.call('list_memories', args);
      expect(isError).toBe(true);
      expect(structured).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: expect.stringMatching(message) } });
    });

    it('says so when nothing is stored', async () => {
      const u = await user();
      expect(await u.ok('list_memories', {})).toEqual({ ok: true, memories: [], next_cursor: null, message: 'No memories stored' });
    });
  });

  it('lists every tool with self-explanatory schemas and the right annotations', async () => {
    const client = await server.client(await server.token(newSubject()));
    try {
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      expect([...byName.keys()].sort()).toEqual(expect.arrayContaining(['confirm', 'correct', 'forget', 'list_memories', 'recall', 'remember']));
      const expectations: Record<string, { readOnlyHint: boolean; destructiveHint: boolean; required: string[] }> = {
        recall: { readOnlyHint: true, destructiveHint: false, required: ['query'] },
        list_memories: { readOnlyHint: true, destructiveHint: false, required: [] },
        forget: { readOnlyHint: false, destructiveHint: true, required: ['memory_id'] },
        correct: { readOnlyHint: false, destructiveHint: true, required: ['memory_id', 'text'] },
        confirm: { readOnlyHint: false, destructiveHint: false, required: ['memory_id'] },
      };
      for (const [name, expected] of Object.entries(expectations)) {
        const tool = byName.get(name)!;
        expect(tool.annotations, name).toMatchObject({ readOnlyHint: expected.readOnlyHint, destructiveHint: expected.destructiveHint });
        expect([...(tool.inputSchema.required ?? [])].sort(), name).toEqual([...expected.required].sort());
        expect(tool.description!.length, name).toBeGreaterThan(80);
        for (const [property, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
          expect((schema as { description?: string }).description, `${name}.${property}`).toEqual(expect.any(String));
        }
      }
      expect(Object.keys(byName.get('recall')!.inputSchema.properties ?? {}).sort()).toEqual(
        ['capture_mode', 'created_after', 'created_before', 'limit', 'max_chars', 'query', 'session_id', 'source_provider', 'space', 'tag_match', 'tags'].sort(),
      );
    } finally {
      await client.close();
    }
  });
});
