import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactSign } from 'jose';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNING_ALG } from '../../src/auth/authorization-server/state-file.js';
import { runCli } from '../helpers/cli.js';
import { engines, TEST_DATABASE_URL } from '../helpers/engines.js';
import { sharedPGlite } from '../helpers/shared.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * What may own memories: the verifier (every token passes it, built-in and external) refuses a subject that is
 * not well-formed Unicode, holds control characters, is "*" or is longer than 255 bytes, with a 401 naming why;
 * and row-level security no longer treats the subject "*" as "every subject".
 */
describe.each(engines)('subjects on %s', (engine) => {
  let server: TestServer;
  const stamp = Date.now();
  const ALICE = `alice-${stamp}`;
  const BOB = `bob-${stamp}`;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    await server.call(await server.token(ALICE), 'remember', { text: 'Alice grows tomatoes on her balcony' });
    await server.call(await server.token(BOB), 'remember', { text: 'Bob repairs old radios' });
  });
  afterAll(async () => {
    await server.close();
  });

  const ping = (token: string) => server.post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { authorization: `Bearer ${token}` });

  async function expectRefused(token: string, description: string): Promise<void> {
    const response = await ping(token);
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(`error_description="${description}"`);
    expect(await response.json()).toMatchObject({ error: { message: `Unauthorized: ${description.replaceAll("'", '"')}` } });
  }

  it.each([
    ['"*" (row-level security once read it as every subject)', '*', `subject not accepted: 'sub' claim '*' is reserved`],
    ['a lone high surrogate', '\uD800x', `subject not accepted: 'sub' claim is not valid Unicode`],
    ['a lone low surrogate', '\uDC00x', `subject not accepted: 'sub' claim is not valid Unicode`],
    ['U+0000', 'alice\u0000', `subject not accepted: 'sub' claim contains control characters`],
    ['a control character', 'ali\u0007ce', `subject not accepted: 'sub' claim contains control characters`],
    ['a C1 control character', 'ali\u0085ce', `subject not accepted: 'sub' claim contains control characters`],
    ['256 bytes', 'é'.repeat(128), `subject not accepted: 'sub' claim is longer than 255 bytes`],
    ['about 2.7 KB', 'x'.repeat(2700), `subject not accepted: 'sub' claim is longer than 255 bytes`],
  ])('refuses a token whose subject is %s with 401 naming the reason', async (_name, subject, description) => {
    await expectRefused(await server.token(subject), description);
  });

  it('no longer lets "\\uD800x" and "\\uDC00x" share memories: neither gets in', async () => {
    for (const subject of ['\uD800x', '\uDC00x']) {
      const response = await server.post(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_memories', arguments: {} } },
        { authorization: `Bearer ${await server.token(subject)}` },
      );
      expect(response.status).toBe(401);
    }
  });

  it('refuses claims that are not valid UTF-8 (decoded to U+FFFD they would merge owners): jose refuses to decode them', async () => {
    const { signingKey } = await server.service.stateFile!.current();
    const now = Math.floor(Date.now() / 1000);
    const head = `{"iss":"${server.config.oauth.authorizationServer}","aud":"${server.config.oauth.audience}","scope":"memory:read memory:write","iat":${now},"exp":${now + 600},"jti":"${randomUUID()}","sub":"x`;
    const payload = Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from('"}')]);
    const token = await new CompactSign(payload).setProtectedHeader({ alg: SIGNING_ALG, kid: signingKey.kid, typ: 'at+jwt' }).sign(signingKey.privateKey);
    await expectRefused(token, 'malformed token: not a JWT access token');
  });

  it('accepts a subject of exactly 255 bytes, and ordinary non-ASCII subjects', async () => {
    for (const subject of [`${'é'.repeat(127)}x`, 'Zoë Ångström', 'auth0|5f7c8ec7c33c6c004bbafe82', '用户-42']) {
      const token = await server.token(subject);
      expect((await ping(token)).status, subject).toBe(200);
      const { isError, structured } = await server.call(token, 'remember', { text: 'The user plays the oboe' });
      expect(isError, JSON.stringify(structured)).toBe(false);
      const listed = await server.call(token, 'list_memories', {});
      expect((listed.structured.memories as { text: string }[]).map((memory) => memory.text)).toEqual(['The user plays the oboe']);
    }
  });

  describe('row-level security: "*" is an ordinary (unusable) subject; every subject is a separate setting', () => {
    it('shows nothing to a transaction whose subject is "*"', async () => {
      const seen = await server.service.db.withSubject('*', 'inspecting rows', async (trx) => ({
        memories: (await sql`select subject from memories`.execute(trx)).rows,
        tombstones: (await sql`select subject from tombstones`.execute(trx)).rows,
        terms: (await sql`select subject from memory_terms`.execute(trx)).rows,
        stats: (await sql`select subject from subject_stats`.execute(trx)).rows,
      }));
      expect(seen).toEqual({ memories: [], tombstones: [], terms: [], stats: [] });
      await expect(
        server.service.db.withSubject('*', 'inspecting rows', (trx) =>
          sql`insert into memories (subject, text, embedding, embedding_model, embedding_dimensions) values (${ALICE}, 'planted', '[1,0,0]', 'x', 3)`.execute(trx),
        ),
      ).rejects.toMatchObject({ code: 'DATABASE_ERROR', cause: expect.objectContaining({ message: expect.stringMatching(/row-level security/) }) });
    });

    it('shows every subject to the maintenance transaction, and only to it', async () => {
      const subjects = await server.service.db.withAllSubjects('inspecting rows', async (trx) =>
        (await sql<{ subject: string }>`select distinct subject from memories`.execute(trx)).rows.map((row) => row.subject),
      );
      expect(subjects).toEqual(expect.arrayContaining([ALICE, BOB]));
      // A subject-scoped transaction right after (same connection on PGlite) is back to one subject.
      const alice = await server.service.db.withSubject(ALICE, 'inspecting rows', async (trx) =>
        (await sql<{ subject: string }>`select distinct subject from memories`.execute(trx)).rows.map((row) => row.subject),
      );
      expect(alice).toEqual([ALICE]);
    });

    it('gives an operator session every row with SET memory_service.all_subjects = on, and none with subject "*"', async () => {
      const asOperator = async (setting: string) => {
        const statement = `${setting}; select count(distinct subject)::int as n from memories`;
        if (engine === 'pglite') {
          // PGlite connects as a superuser, which bypasses row-level security: take the service's role as it does.
          const pglite = await sharedPGlite();
          const results = await pglite.exec(`begin; set local search_path to "${server.schema}", public; set local role memory_service_rls; ${statement}; rollback`);
          return (results.at(-2)!.rows[0] as { n: number }).n;
        }
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        try {
          const results = (await client.query(`set search_path to "${server.schema}", public; ${statement}`)) as unknown as pg.QueryResult[];
          return (results.at(-1)!.rows[0] as { n: number }).n;
        } finally {
          await client.end();
        }
      };
      expect(await asOperator(`set memory_service.subject = '*'`)).toBe(0);
      expect(await asOperator('set memory_service.all_subjects = on')).toBeGreaterThanOrEqual(2);
    });
  });
});

describe('memory-service token issue --sub', () => {
  const home = () => mkdtempSync(join(tmpdir(), 'memory-service-sub-'));

  it.each([
    ['*', /--sub is not a usable subject: the "sub" claim "\*" is reserved/],
    [' * ', /--sub is not a usable subject: the "sub" claim "\*" is reserved/],
    ['x'.repeat(256), /--sub is not a usable subject: the "sub" claim is longer than 255 bytes/],
    ['ali\u0001ce', /--sub is not a usable subject: the "sub" claim contains control characters/],
  ])('refuses %j with exit code 2 and prints no token', async (sub, message) => {
    const { code, stdout, stderr } = await runCli(['token', 'issue', '--sub', sub], { HOME: home() });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe('');
  });
});
