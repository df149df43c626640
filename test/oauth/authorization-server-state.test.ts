import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { engines } from '../helpers/engines.js';
import { freePort, startTestServer, type TestServer } from '../helpers/test-server.js';
import { freshFetch } from './fresh-fetch.js';
import { authorizationUrl, pkce, registerClient, signInWithForms, tokenRequest } from './oauth-client.js';

const BOB = { username: 'bob', password: 'bob-has-a-long-password' };
const CALLBACK = 'http://127.0.0.1:9/callback';

interface Row {
  generation: string;
  kind: string;
  id: string;
  payload: Record<string, unknown>;
  expires_at: Date;
}

/**
 * Where the built-in authorization server keeps what it issues: the database (oauth_objects), under the state
 * file's generation, out of every subject's sight. Two servers sharing the database and the state file agree on
 * everything, which is what replicas need.
 */
describe.each(engines)('authorization server state on %s', (engine) => {
  let one: TestServer;
  let two: TestServer;
  let baseUrl: string;

  /** Both servers answer for one BaseUrl (the issuer), as replicas behind one proxy do. */
  const startPair = async (dataDir?: string, schema?: string, samePort?: number) => {
    const port = samePort ?? (await freePort());
    baseUrl = `http://127.0.0.1:${port}`;
    const env = { MEMORY_SERVICE_BASE_URL: baseUrl };
    one = await startTestServer({ engine, port, env, ...(dataDir === undefined ? {} : { dataDir }), ...(schema === undefined ? {} : { schema }) });
    two = await startTestServer({ engine, env, dataDir: one.dataDir, schema: one.schema });
  };
  /** Sends each request to the other server in turn (round robin, no stickiness). */
  let turn = 0;
  const alternating: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const target = [one, two][turn++ % 2]!;
    url.port = new URL(target.url).port;
    return freshFetch(url, init);
  };
  const rows = async (server: TestServer): Promise<Row[]> => {
    const { rows: found } = await server.service.db.withAuthorizationServer('test', (trx) =>
      sql<Row>`select generation, kind, id, payload, expires_at from oauth_objects order by created_at`.execute(trx),
    );
    return found;
  };
  const signIn = async (clientId: string) => {
    const { verifier, challenge } = pkce();
    const url = authorizationUrl(baseUrl, {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: CALLBACK,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'state-test',
    });
    const callback = await signInWithForms(url, BOB, { fetchFn: alternating });
    return { code: callback.searchParams.get('code')!, verifier };
  };
  const token = (server: TestServer, params: Record<string, string>) => tokenRequest(server.address, params);
  /** A tools/call at this very server (its `call` would go to BaseUrl, the first server). */
  const recall = async (server: TestServer, accessToken: string) => {
    const response = await fetch(`${server.address}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recall', arguments: { query: 'anything' } } }),
    });
    return response.status;
  };

  beforeAll(async () => {
    await startPair();
    await new UserStore(usersFilePath(one.dataDir)).add(BOB.username, BOB.password);
  });
  afterAll(async () => {
    await two?.close({ keepData: true });
    await one?.close();
    if (one !== undefined) rmSync(one.dataDir, { recursive: true, force: true });
  });

  it('runs registration, sign-in, token, refresh and revocation across two servers sharing the database and the state file', async () => {
    const registered = await registerClient(baseUrl, { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none', client_name: 'Shared' }, {}, alternating);
    expect(registered.status).toBe(201);
    const clientId = registered.body.client_id!;
    // Every step of the sign-in (authorize, pages, forms, resumptions) alternated between the servers.
    const { code, verifier } = await signIn(clientId);
    expect(turn).toBeGreaterThanOrEqual(6);
    const tokens = await token(two, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: CALLBACK, client_id: clientId });
    expect(tokens.status).toBe(200);
    for (const server of [one, two]) expect(await recall(server, tokens.body.access_token!)).toBe(200);
    // A code is single-use on every server, and using it again revokes what it gave, everywhere.
    expect((await token(one, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: CALLBACK, client_id: clientId })).body.error).toBe('invalid_grant');
    expect((await token(two, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token!, client_id: clientId })).body.error).toBe('invalid_grant');

    const next = await signIn(clientId);
    const fresh = await token(one, { grant_type: 'authorization_code', code: next.code, code_verifier: next.verifier, redirect_uri: CALLBACK, client_id: clientId });
    const refreshed = await token(two, { grant_type: 'refresh_token', refresh_token: fresh.body.refresh_token!, client_id: clientId });
    expect(refreshed.status).toBe(200);
    // The replayed first token, at the other server, revokes the family there too.
    expect((await token(one, { grant_type: 'refresh_token', refresh_token: fresh.body.refresh_token!, client_id: clientId })).body.error).toBe('invalid_grant');
    expect((await token(two, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token!, client_id: clientId })).body.error).toBe('invalid_grant');

    const again = await signIn(clientId);
    const second = await token(one, { grant_type: 'authorization_code', code: again.code, code_verifier: again.verifier, redirect_uri: CALLBACK, client_id: clientId });
    const revoked = await fetch(`${two.address}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: second.body.refresh_token!, token_type_hint: 'refresh_token', client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    expect((await token(one, { grant_type: 'refresh_token', refresh_token: second.body.refresh_token!, client_id: clientId })).body.error).toBe('invalid_grant');
  });

  it('stores no usable code or refresh token, and nothing of it in the state file', async () => {
    const clientId = (await registerClient(baseUrl, { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' })).body.client_id!;
    const { code, verifier } = await signIn(clientId);
    const tokens = await token(one, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: CALLBACK, client_id: clientId });
    const stored = await rows(one);
    expect(new Set(stored.map((row) => row.kind))).toEqual(new Set(['Client', 'Grant', 'Session', 'AuthorizationCode', 'RefreshToken']));
    const everything = JSON.stringify(stored);
    for (const secret of [code, tokens.body.refresh_token!]) expect(everything).not.toContain(secret);
    const stateFile = readFileSync(one.config.oauth.asIniFile, 'utf8');
    expect(stateFile).not.toContain(clientId);
    expect(stateFile).not.toContain('[');
  });

  it('is out of every subject transaction’s sight', async () => {
    expect((await rows(one)).length).toBeGreaterThan(0);
    const count = (trx: Parameters<Parameters<TestServer['service']['db']['withSubject']>[2]>[0]) =>
      sql<{ count: string | number }>`select count(*) as count from oauth_objects`.execute(trx).then((result) => Number(result.rows[0]!.count));
    expect(await one.service.db.withSubject('bob', 'test', count)).toBe(0);
    expect(await one.service.db.withSubject('', 'test', count)).toBe(0);
    expect(await one.service.db.withAllSubjects('test', count)).toBe(0);
    // A subject's transaction cannot write there either.
    await expect(
      one.service.db.withSubject('bob', 'test', (trx) =>
        sql`insert into oauth_objects (generation, kind, id, payload, expires_at) values ('g', 'Client', 'x', '{}', now() + interval '1 day')`.execute(trx),
      ),
    ).rejects.toMatchObject({ code: 'DATABASE_ERROR' });
  });

  it('imports the clients, grants and refresh tokens an earlier version kept in the state file, once', async () => {
    const clientId = (await registerClient(baseUrl, { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' })).body.client_id!;
    const { code, verifier } = await signIn(clientId);
    const tokens = await token(one, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: CALLBACK, client_id: clientId });
    const refreshToken = tokens.body.refresh_token!;

    // As 0.1 wrote them: base64url JSON of { p: payload, e: expiry }, keyed by the id's SHA-256, in sections.
    const legacy = (await rows(one)).filter((row) => ['Client', 'Grant', 'RefreshToken'].includes(row.kind));
    const section = (kind: string, name: string) =>
      `[${name}]\n${legacy
        .filter((row) => row.kind === kind)
        .map((row) => {
          const payload = kind === 'RefreshToken' ? { ...row.payload, jti: refreshToken } : row.payload;
          const expiry = kind === 'Client' ? null : Math.floor(new Date(row.expires_at).getTime() / 1000);
          return `${row.id}=${Buffer.from(JSON.stringify({ p: payload, e: expiry })).toString('base64url')}`;
        })
        .join('\n')}\n`;
    const sections = `\n${section('Client', 'oauth_clients')}${section('Grant', 'oauth_grants')}${section('RefreshToken', 'oauth_refresh_tokens')}`;
    // A database that never had these rows, as before the upgrade.
    await one.service.db.withAuthorizationServer('test', (trx) => sql`delete from oauth_objects`.execute(trx));
    const { dataDir, schema } = one;
    await two.close({ keepData: true });
    await one.close({ keepData: true });
    appendFileSync(one.config.oauth.asIniFile, sections);

    const port = Number(new URL(baseUrl).port);
    await startPair(dataDir, schema, port);
    expect(readFileSync(one.config.oauth.asIniFile, 'utf8')).not.toContain('oauth_refresh_tokens');
    const refreshed = await token(two, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    expect(refreshed.body).toMatchObject({ token_type: 'Bearer' });

    // The login ends (revoked); were the file's rewrite lost, its sections would bring the token back. They do not:
    // the import happens once per generation.
    const revoked = await fetch(`${two.address}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshed.body.refresh_token!, token_type_hint: 'refresh_token', client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    const { dataDir: sameDir, schema: sameSchema } = one;
    await two.close({ keepData: true });
    await one.close({ keepData: true });
    appendFileSync(one.config.oauth.asIniFile, sections);
    await startPair(sameDir, sameSchema, port);
    expect(readFileSync(one.config.oauth.asIniFile, 'utf8')).not.toContain('oauth_refresh_tokens');
    for (const stale of [refreshToken, refreshed.body.refresh_token!]) {
      expect((await token(one, { grant_type: 'refresh_token', refresh_token: stale, client_id: clientId })).body.error).toBe('invalid_grant');
    }
  });

  it('after the state file is deleted, finds nothing from before on either server and sweeps it away', async () => {
    const clientId = (await registerClient(baseUrl, { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' })).body.client_id!;
    const { code, verifier } = await signIn(clientId);
    const tokens = await token(one, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: CALLBACK, client_id: clientId });
    const before = (await one.service.stateFile!.current()).generation;
    rmSync(one.config.oauth.asIniFile);

    for (const server of [one, two]) {
      const refresh = await token(server, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token!, client_id: clientId });
      expect(refresh.status).toBe(401);
      expect(refresh.body.error).toBe('invalid_client');
      expect(await recall(server, tokens.body.access_token!)).toBe(401);
    }
    // Both servers moved to the one new generation.
    const after = (await one.service.stateFile!.current()).generation;
    expect(after).not.toBe(before);
    expect((await two.service.stateFile!.current()).generation).toBe(after);
    const deadline = Date.now() + 10_000;
    while ((await rows(one)).some((row) => row.generation === before) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await rows(one)).filter((row) => row.generation === before)).toEqual([]);

    const fresh = (await registerClient(baseUrl, { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }, {}, alternating)).body.client_id!;
    const again = await signIn(fresh);
    expect((await token(two, { grant_type: 'authorization_code', code: again.code, code_verifier: again.verifier, redirect_uri: CALLBACK, client_id: fresh })).status).toBe(200);
  });
});
