import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../helpers/prng.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { ORDINARY_TEXTS, SECRET_TEXTS } from '../fixtures/secrets-corpus.js';

/** Every string a write stores is checked for secrets, and a refusal names the argument, never the value. */
const random = mulberry32(0x7a65);
const token36 = (): string => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < 36; i++) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
};
const GITHUB_TOKEN = `ghp_${token36()}`;
const PASSWORD = 'DB_PASSWORD=XkpQmZwLrT';

let counter = 0;
const newSubject = () => `secret-fields-${Date.now()}-${counter++}`;

describe.each(engines)('secrets in stored fields on %s', (engine) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ engine });
  });
  afterAll(async () => {
    await server.close();
  });

  const state = (subject: string) =>
    server.service.db.withSubject(subject, 'inspecting rows', async (trx) => ({
      memories: await trx.selectFrom('memories').select(['id', 'text', 'tags', 'source_provider', 'session_id']).orderBy('id').execute(),
      tombstones: await trx.selectFrom('tombstones').select(['memory_id', 'note']).orderBy('id').execute(),
    }));

  const expectRefused = (result: { isError: boolean; structured: Record<string, unknown> }, argument: string, secret: string) => {
    expect(result.isError).toBe(true);
    expect(result.structured).toEqual({
      ok: false,
      error: { code: 'SECRET_REJECTED', message: expect.stringMatching(new RegExp(`^${argument.replace(/[[\]]/g, '\\$&')} looks like a secret`)) },
    });
    expect(JSON.stringify(result.structured)).not.toContain(secret);
  };

  it.each([
    ['text', { text: `The user's GitHub token is ${GITHUB_TOKEN}` }, GITHUB_TOKEN],
    ['tags[1]', { text: 'The user deploys on Fridays', tags: ['work', GITHUB_TOKEN] }, GITHUB_TOKEN],
    ['tags[0]', { text: 'The user deploys on Fridays', tags: [PASSWORD] }, 'XkpQmZwLrT'],
    ['source_provider', { text: 'The user deploys on Fridays', source_provider: GITHUB_TOKEN }, GITHUB_TOKEN],
    ['session_id', { text: 'The user deploys on Fridays', session_id: `pwd=Summer` }, 'Summer'],
  ])('remember refuses a secret in %s with SECRET_REJECTED, storing nothing', async (argument, args, secret) => {
    const subject = newSubject();
    expectRefused(await server.call(await server.token(subject), 'remember', args), argument, secret);
    expect(await state(subject)).toEqual({ memories: [], tombstones: [] });
  });

  it.each([
    ['text', { text: `The user's GitHub token is ${GITHUB_TOKEN}` }, GITHUB_TOKEN],
    ['tags[0]', { text: 'The user deploys on Thursdays', tags: [GITHUB_TOKEN] }, GITHUB_TOKEN],
    ['source_provider', { text: 'The user deploys on Thursdays', source_provider: PASSWORD }, 'XkpQmZwLrT'],
    ['session_id', { text: 'The user deploys on Thursdays', session_id: GITHUB_TOKEN }, GITHUB_TOKEN],
    ['reason', { text: 'The user deploys on Thursdays', reason: `rotated ${GITHUB_TOKEN}` }, GITHUB_TOKEN],
  ])('correct refuses a secret in %s, keeping the old memory and writing no tombstone', async (argument, args, secret) => {
    const subject = newSubject();
    const token = await server.token(subject);
    const memoryId = (await server.call(token, 'remember', { text: 'The user deploys on Fridays', tags: ['work'] })).structured.memory_id as number;
    const before = await state(subject);
    expectRefused(await server.call(token, 'correct', { memory_id: memoryId, ...args }), argument, secret);
    expect(await state(subject)).toEqual(before);
  });

  it('forget refuses a secret in reason, forgetting nothing', async () => {
    const subject = newSubject();
    const token = await server.token(subject);
    const memoryId = (await server.call(token, 'remember', { text: 'The user deploys on Fridays' })).structured.memory_id as number;
    const before = await state(subject);
    expectRefused(await server.call(token, 'forget', { memory_id: memoryId, reason: 'the wifi password is BlueElephant' }), 'reason', 'BlueElephant');
    expect(await state(subject)).toEqual(before);
  });

  it('checks tags as given, then stores them normalised', async () => {
    const subject = newSubject();
    const token = await server.token(subject);
    const { isError } = await server.call(token, 'remember', { text: 'The user deploys on Fridays', tags: ['#Work', '  Project_Alpha  beta '] });
    expect(isError).toBe(false);
    expect((await state(subject)).memories[0]!.tags).toEqual(['work', 'project-alpha-beta']);
    const invalid = await server.call(token, 'remember', { text: 'The user deploys on Mondays', tags: ['ok', ' # '] });
    expect(invalid.structured).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: 'tags[1] is empty after normalisation' } });
    expect((await state(subject)).memories).toHaveLength(1);
  });

  it('refuses every secret-shaped text of the corpus and stores every ordinary one', async () => {
    const subject = newSubject();
    const token = await server.token(subject);
    const stored: string[] = [];
    for (const entry of [...SECRET_TEXTS, ...ORDINARY_TEXTS]) {
      const { isError, structured } = await server.call(token, 'remember', { text: entry.text, dedup_policy: 'insert' });
      expect({ why: entry.why, code: isError ? (structured.error as { code: string }).code : 'stored' }).toEqual({
        why: entry.why,
        code: entry.secret ? 'SECRET_REJECTED' : 'stored',
      });
      if (!isError) stored.push(entry.text);
    }
    expect((await state(subject)).memories.map((row) => row.text)).toEqual(stored);
  });
});
