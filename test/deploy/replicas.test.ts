import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { authorizeInFreshBrowser, browserSkipReason, startCallbackServer, type CallbackServer } from '../helpers/browser.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../helpers/engines.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { chromiumArgsFor, makeTestTls, nginxSkipReason, PUBLIC_NAME, publicNameToLoopback, startReadmeProxy, type Nginx, type TestTls } from '../helpers/nginx.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';
import { freePort } from '../helpers/test-server.js';
import { MemoryOAuthProvider } from '../oauth/memory-oauth-provider.js';
import { tokenRequest } from '../oauth/oauth-client.js';

const skip =
  (TEST_DATABASE_URL === undefined ? 'replica tests skipped: they need PostgreSQL (TEST_DATABASE_URL)' : undefined) ?? nginxSkipReason() ?? browserSkipReason();
if (skip !== undefined) console.warn(skip);

const ALICE = { username: 'alice', password: 'correct horse battery staple' };
const REPLICAS = 3;

type Fetch = typeof fetch;

/**
 * Three `memory-service serve` processes against one PostgreSQL, sharing one state file and one users file,
 * behind Debian's nginx configured with docs/deployment.md's block: round robin, no sticky sessions. Everything a
 * connector does (registration, the browser sign-in, tokens, refresh, /mcp) works whichever replica answers.
 */
describe.skipIf(skip !== undefined)('replicas behind nginx round robin, on one PostgreSQL', () => {
  let dir: string;
  let tls: TestTls;
  let nginx: Nginx;
  let openai: FakeOpenAIServer;
  let callbacks: CallbackServer;
  let baseUrl: string;
  let stateFile: string;
  let aliceId: string;
  const schema = uniqueSchema();
  const replicas: ServeProcess[] = [];
  const agents: Agent[] = [];

  /**
   * fetch over TLS trusting the test CA. Answers are the global Response class: the SDK tells an OAuth error
   * response by `instanceof Response`, which undici's own class fails.
   */
  const httpsFetch = (): Fetch => {
    const agent = new Agent({ connect: { ca: tls.caPem, lookup: publicNameToLoopback as never } });
    agents.push(agent);
    return async (input, init) => {
      const response = await undiciFetch(input as never, { ...(init as object), dispatcher: agent });
      return new Response(response.body as ReadableStream | null, { status: response.status, statusText: response.statusText, headers: response.headers as never });
    };
  };
  /** A tools/call sent to one replica directly, bypassing nginx. */
  const callAt = async (replica: ServeProcess, accessToken: string, name: string, args: Record<string, unknown>) => {
    const response = await fetch(`${replica.address}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    const body = response.status === 200 ? ((await response.json()) as { result: { isError?: boolean; structuredContent: unknown } }) : undefined;
    return { status: response.status, body };
  };
  /** Which replicas answered requests to paths matching `pattern`, from their own logs. */
  const servedBy = (pattern: RegExp) =>
    replicas
      .map((replica, index) => ({
        index,
        count: replica.logs().filter((line) => line.msg === 'request completed' && pattern.test(String((line.req as { url?: string } | undefined)?.url))).length,
      }))
      .filter(({ count }) => count > 0)
      .map(({ index }) => index);

  /** 401 → discovery → registration → browser sign-in through nginx → tokens, with the official SDK client. */
  const signIn = async (provider: MemoryOAuthProvider, fetchVia: Fetch) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: provider, fetch: fetchVia });
    await expect(new Client({ name: 'replica-e2e', version: '1.0.0' }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const callback = await authorizeInFreshBrowser(callbacks, provider.authorizationUrl!, ALICE, 'allow', chromiumArgsFor(tls));
    await transport.finishAuth(callback.searchParams.get('code')!);
    await transport.close();
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memory-service-replicas-'));
    tls = await makeTestTls(dir, [PUBLIC_NAME]);
    openai = await startFakeOpenAIServer({ dimensions: 64 });
    const publicPort = await freePort();
    baseUrl = `https://${PUBLIC_NAME}:${publicPort}`;
    const dataDir = join(dir, 'shared');
    stateFile = join(dataDir, 'oauth-as.ini');
    aliceId = (await new UserStore(usersFilePath(dataDir)).add(ALICE.username, ALICE.password)).id;
    const ports = await Promise.all(Array.from({ length: REPLICAS }, () => freePort()));
    // Started together with no state file yet, and no tables: they must agree on one generation and migrate once.
    expect(existsSync(stateFile)).toBe(false);
    replicas.push(
      ...(await Promise.all(
        ports.map((port) =>
          startServeProcess(port, {
            MEMORY_SERVICE_BASE_URL: baseUrl,
            MEMORY_SERVICE_TRUST_PROXY: '127.0.0.1',
            MEMORY_SERVICE_DATA_DIR: dataDir,
            MEMORY_SERVICE_DATABASE_URL: TEST_DATABASE_URL!,
            MEMORY_SERVICE_DATABASE_SCHEMA: schema,
            MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai',
            MEMORY_SERVICE_EMBEDDING_MODEL: 'test-embedding-64',
            MEMORY_SERVICE_EMBEDDING_DIMENSIONS: '64',
            MEMORY_SERVICE_OPENAI_BASE_URL: openai.url,
            OPENAI_API_KEY: 'sk-test-replicas',
          }),
        ),
      )),
    );
    nginx = await startReadmeProxy(tls, publicPort, ports);
    callbacks = await startCallbackServer();
  }, 240_000);

  afterAll(async () => {
    await callbacks?.close();
    await nginx?.stop();
    await Promise.all(replicas.map((replica) => replica.stop()));
    await Promise.all(agents.map((agent) => agent.close()));
    await openai?.close();
    if (TEST_DATABASE_URL !== undefined) {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    }
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('started together, the replicas share one signing key', async () => {
    const kids = await Promise.all(
      replicas.map(async (replica) => ((await (await fetch(`${replica.address}/jwks`)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid)),
    );
    expect(kids[0]).toHaveLength(1);
    for (const kid of kids) expect(kid).toEqual(kids[0]);
  });

  it('runs registration, the browser sign-in, token, refresh and /mcp whichever replica answers; deleting the state file logs out everywhere', { timeout: 180_000 }, async () => {
    const fetchVia = httpsFetch();
    const provider = new MemoryOAuthProvider(callbacks.redirectUri, 'Connector behind three replicas');
    await signIn(provider, fetchVia);
    // The sign-in's steps (authorization request, pages, forms, resumptions) landed on different replicas.
    expect(servedBy(/^\/(authorize|oauth\/interaction)/).length).toBeGreaterThanOrEqual(2);
    expect(nginx.accessLog()).toMatch(/"POST \/oauth\/interaction\/\S+\/login HTTP\/2\.0" 303/);
    const tokens = provider.tokens()!;
    expect(decodeJwt(tokens.access_token)).toMatchObject({ iss: baseUrl, aud: `${baseUrl}/mcp`, sub: aliceId });

    // /mcp on every replica: written on one, recalled on the others.
    expect((await callAt(replicas[0]!, tokens.access_token, 'remember', { text: 'Alice keeps her kayak at the boathouse on pier 4' })).status).toBe(200);
    for (const replica of replicas.slice(1)) {
      const recalled = await callAt(replica, tokens.access_token, 'recall', { query: 'Where is the kayak kept?' });
      expect(recalled.status).toBe(200);
      expect(JSON.stringify(recalled.body?.result.structuredContent)).toContain('pier 4');
    }
    // And through nginx with the SDK client, then a refresh (rotation) and the tools with the new token.
    expect(await auth(provider, { serverUrl: `${baseUrl}/mcp`, fetchFn: fetchVia })).toBe('AUTHORIZED');
    const refreshed = provider.tokens()!;
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const client = new Client({ name: 'replica-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: provider, fetch: fetchVia }));
    try {
      for (let call = 0; call < REPLICAS; call++) {
        const recalled = await client.callTool({ name: 'recall', arguments: { query: 'kayak' } });
        expect(JSON.stringify(recalled.structuredContent)).toContain('pier 4');
      }
    } finally {
      await client.close();
    }
    expect(servedBy(/^\/mcp$/)).toEqual([0, 1, 2]);
    expect(servedBy(/^\/token$/).length).toBeGreaterThanOrEqual(1);

    // The state file deleted: every replica refuses the old tokens at once.
    rmSync(stateFile);
    const clientId = (provider.clientInformation() as { client_id: string }).client_id;
    for (const replica of replicas) {
      expect((await callAt(replica, refreshed.access_token, 'recall', { query: 'kayak' })).status).toBe(401);
      const refresh = await tokenRequest(replica.address, { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token!, client_id: clientId });
      expect(refresh.status).toBe(401);
      expect(refresh.body.error).toBe('invalid_client');
    }
    // All of them on the one new generation.
    const kids = await Promise.all(replicas.map(async (replica) => ((await (await fetch(`${replica.address}/jwks`)).json()) as { keys: { kid: string }[] }).keys[0]!.kid));
    expect(new Set(kids).size).toBe(1);
    expect(kids[0]).not.toBe(decodeProtectedHeader(tokens.access_token).kid);

    // The SDK registers again, the user signs in again, and the memories (owned by the user, not the login) are there.
    provider.authorizationUrl = undefined;
    expect(await auth(provider, { serverUrl: `${baseUrl}/mcp`, fetchFn: fetchVia })).toBe('REDIRECT');
    expect(provider.invalidations).toContain('all');
    expect((provider.clientInformation() as { client_id: string }).client_id).not.toBe(clientId);
    const callback = await authorizeInFreshBrowser(callbacks, provider.authorizationUrl!, ALICE, 'allow', chromiumArgsFor(tls));
    expect(await auth(provider, { serverUrl: `${baseUrl}/mcp`, authorizationCode: callback.searchParams.get('code')!, fetchFn: fetchVia })).toBe('AUTHORIZED');
    for (const replica of replicas) {
      const recalled = await callAt(replica, provider.tokens()!.access_token, 'recall', { query: 'kayak' });
      expect(JSON.stringify(recalled.body?.result.structuredContent)).toContain('pier 4');
    }
  });
});
