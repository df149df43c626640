import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExternalVerifier } from '../../src/auth/resource-server/external-verifier.js';
import { TokenError } from '../../src/auth/resource-server/token-verifier.js';
import { engines } from '../helpers/engines.js';
import { freePort, startTestServer, type TestServer } from '../helpers/test-server.js';
import { startExternalIssuer, type ExternalIssuer } from './external-issuer.js';

const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

describe.each(engines)('an external authorization server on %s', (engine) => {
  let external: ExternalIssuer;
  let server: TestServer;
  let builtIn: TestServer;

  beforeAll(async () => {
    const port = await freePort();
    external = await startExternalIssuer({ defaultResource: `http://127.0.0.1:${port}/mcp` });
    server = await startTestServer({ engine, port, env: { MEMORY_SERVICE_OAUTH_AUTHORIZATION_SERVER: external.issuer } });
    builtIn = await startTestServer({ engine });
  });
  afterAll(async () => {
    await server?.close();
    await builtIn?.close();
    await external?.close();
  });

  it('turns the built-in authorization server off and points clients at the external one', async () => {
    expect(server.config.oauth.builtIn).toBe(false);
    const metadata = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(metadata).toMatchObject({ resource: server.mcpUrl, authorization_servers: [external.issuer] });
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/authorize', '/register', '/token']) {
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(404);
    }
  });

  it("accepts the external server's tokens", async () => {
    const token = await external.token();
    expect(decodeJwt(token)).toMatchObject({ iss: external.issuer, aud: server.mcpUrl, sub: 'robot' });
    const remembered = await server.call(token, 'remember', { text: 'The robot charges at night' });
    expect(remembered.isError).toBe(false);
    const recalled = await server.call(token, 'recall', { query: 'When does the robot charge?' });
    expect(JSON.stringify(recalled.structured)).toContain('charges at night');
  });

  it('refuses tokens of the built-in server with an issuer mismatch', async () => {
    const response = await server.post(rpc, { authorization: `Bearer ${await builtIn.token('robot')}` });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate')!;
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(`issuer does not match: expected '${external.issuer}'`);
    expect(challenge).toContain(`resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('refuses external tokens for another audience', async () => {
    const token = await external.token({ resource: 'https://other.example/api' });
    const response = await server.post(rpc, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('audience does not match');
  });

  it('takes the subject from the configured claim', async () => {
    const other = await startTestServer({
      engine,
      env: { MEMORY_SERVICE_OAUTH_AUTHORIZATION_SERVER: external.issuer, MEMORY_SERVICE_OAUTH_SUBJECT_CLAIM: 'email' },
    });
    try {
      const token = await external.token({ resource: other.mcpUrl });
      expect((await other.call(token, 'remember', { text: 'The robot likes e-mail' })).isError).toBe(false);
      const noClaim = await startTestServer({
        engine,
        env: { MEMORY_SERVICE_OAUTH_AUTHORIZATION_SERVER: external.issuer, MEMORY_SERVICE_OAUTH_SUBJECT_CLAIM: 'employee_id' },
      });
      const refused = await noClaim.post(rpc, { authorization: `Bearer ${await external.token({ resource: noClaim.mcpUrl })}` });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain(`token has no 'employee_id' claim`);
      await noClaim.close();
    } finally {
      await other.close();
    }
  });
});

describe('external verifier key rotation', () => {
  let external: ExternalIssuer;
  const audience = 'https://memory.example/mcp';

  beforeAll(async () => {
    external = await startExternalIssuer({ defaultResource: audience });
  });
  afterAll(async () => {
    await external?.close();
  });

  it('discovers through OpenID discovery when RFC 8414 metadata is absent', async () => {
    const verifier = createExternalVerifier({ issuer: external.issuer, audience, subjectClaim: 'sub' });
    const metadata = await verifier.discover();
    expect(metadata).toMatchObject({ issuer: external.issuer, jwks_uri: `${external.issuer}/jwks` });
  });

  it('fetches a rotated key, at most once per cooldown', async () => {
    const verifier = createExternalVerifier({ issuer: external.issuer, audience, subjectClaim: 'sub', jwksCooldownSeconds: 2 });
    const oldToken = await external.token();
    expect((await verifier.verify(oldToken)).subject).toBe('robot');
    const fetchesAfterFirst = external.jwksFetches;

    external.rotate();
    const newToken = await external.token();
    expect(decodeProtectedHeader(newToken).kid).not.toBe(decodeProtectedHeader(oldToken).kid);
    // Within the cooldown an unknown kid is not fetched again.
    await expect(verifier.verify(newToken)).rejects.toThrow(TokenError);
    await expect(verifier.verify(newToken)).rejects.toMatchObject({ description: 'unknown signing key' });
    expect(external.jwksFetches).toBe(fetchesAfterFirst);

    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect((await verifier.verify(newToken)).subject).toBe('robot');
    expect(external.jwksFetches).toBe(fetchesAfterFirst + 1);
    // The old key is still published, so tokens already handed out keep working.
    expect((await verifier.verify(oldToken)).subject).toBe('robot');
  });

  it('reports an unreachable server instead of a signature failure', async () => {
    const verifier = createExternalVerifier({ issuer: 'http://127.0.0.1:9', audience, subjectClaim: 'sub', timeoutSeconds: 2 });
    const token = await external.token();
    // The issuer check comes first; a token naming the unreachable issuer reaches the key lookup.
    await expect(verifier.verify(token)).rejects.toMatchObject({ description: expect.stringContaining('issuer does not match') });
    const verifierForIt = createExternalVerifier({ issuer: external.issuer, audience, subjectClaim: 'sub' });
    await external.close();
    await expect(verifierForIt.verify(token)).rejects.toMatchObject({
      description: `authorization server metadata could not be fetched from ${external.issuer}`,
    });
    external = await startExternalIssuer({ defaultResource: audience });
  });
});
