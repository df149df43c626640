import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { cliArgs } from '../helpers/cli-command.js';
import { freePort } from '../helpers/test-server.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'memory-cli-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('memory-service token issue', () => {
  it('prints a signed RFC 9068 access token and nothing else', async () => {
    const home = tempDir();
    const { code, stdout, stderr } = await runCli(['token', 'issue', '--sub', 'alice', '--ttl', '2h'], { HOME: home });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const token = stdout.trim();
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      iss: 'http://127.0.0.1:8787',
      aud: 'http://127.0.0.1:8787/mcp',
      sub: 'alice',
      scope: 'memory:read memory:write',
      jti: expect.any(String),
    });
    expect(claims.exp! - claims.iat!).toBe(7200);
    // The state file was created in the data directory, private to its owner.
    const state = statSync(join(home, '.local/share/memory-service/oauth-as.ini'));
    expect(state.mode & 0o777).toBe(0o600);
  });

  it('writes --space ids and personal into the scope, without opening the database', async () => {
    const home = tempDir();
    const id = 'space:k3v9q2m7x1c8b4n6z0p5w2r8';
    const { code, stdout, stderr } = await runCli(['token', 'issue', '--sub', 'alice', '--space', id, '--space', 'Personal', '--space', id], { HOME: home });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(decodeJwt(stdout.trim()).scope).toBe(`memory:read memory:write ${id} space:personal`);
    // No database was made in the data folder.
    expect(() => statSync(join(home, '.local/share/memory-service/pglite'))).toThrow();
  });

  it.each([
    [['token', 'issue'], /--user NAME or --sub SUBJECT is required/],
    [['token', 'issue', '--sub', 'a', '--space', ' '], /--space must name a space/],
    [['token', 'issue', '--user', 'nobody'], /no user named "nobody" \(memory-service user list shows them\)/],
    [['token', 'issue', '--user', 'a', '--sub', 'a'], /give --user NAME or --sub SUBJECT, not both/],
    [['export', '--user', 'nobody'], /export: no user named "nobody"/],
    [['token', 'issue', '--sub', 'a', '--scope', 'admin'], /--scope must name memory:read and\/or memory:write/],
    [['token', 'issue', '--sub', 'a', '--ttl', 'forever'], /--ttl must be a duration/],
    [['frobnicate'], /Unknown command: frobnicate/],
  ])('refuses %j with exit code 2', async (args, message) => {
    const { code, stderr, stdout } = await runCli(args, { HOME: tempDir() });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe('');
  });

  it('refuses when an external authorization server is configured', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'app.ini'), 'OAuthAuthorizationServer = https://login.example.com/realms/x\n');
    const { code, stderr } = await runCli(['token', 'issue', '--sub', 'a', '--config', join(dir, 'app.ini')], { HOME: dir });
    expect(code).toBe(2);
    expect(stderr).toMatch(/only the built-in authorization server issues tokens/);
  });
});

describe('configuration errors', () => {
  it('refuses to start with one message listing every bad setting', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.ini'), 'Port = 99999\nEmbeddingProvider = word2vec\nNearDuplicateThreshold = 2\n');
    const { code, stderr } = await runCli(['serve', '--config', join(dir, 'bad.ini')], {
      HOME: dir,
      MEMORY_SERVICE_MAX_TEXT_CHARS: 'lots',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('Invalid configuration');
    for (const setting of ['Port', 'EmbeddingProvider', 'NearDuplicateThreshold', 'MaxTextChars']) expect(stderr).toContain(`${setting}:`);
  });
});

describe('memory-service migrate', () => {
  it('migrates the configured database and says so', async () => {
    const dir = tempDir();
    const { code, stdout } = await runCli(['migrate'], { HOME: dir, MEMORY_SERVICE_DATA_DIR: join(dir, 'data') });
    expect(code).toBe(0);
    expect(stdout).toMatch(/Database migrated to 0001_initial|Database migrated to \d{4}_\w+/);
    expect(statSync(join(dir, 'data', 'pglite')).isDirectory()).toBe(true);
  });
});

describe('memory-service serve', () => {
  it('honours --config and MEMORY_SERVICE_* overrides, and stops cleanly on SIGTERM', async () => {
    const dir = tempDir();
    const port = await freePort();
    writeFileSync(
      join(dir, 'application.ini'),
      `Port = 1\nBaseUrl = http://127.0.0.1:${port}\nOAuthAuthorizationServer = http://127.0.0.1:${port}\nDataDir = ${join(dir, 'data')}\nLogLevel = info\n`,
    );
    const env = { HOME: dir, MEMORY_SERVICE_PORT: String(port) };
    const token = (await runCli(['token', 'issue', '--sub', 'bob', '--config', join(dir, 'application.ini')], env)).stdout.trim();
    const child = spawn(process.execPath, cliArgs('serve', '--config', join(dir, 'application.ini')), {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    child.stdout.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const url = `http://127.0.0.1:${port}/mcp`;
      const deadline = Date.now() + 60_000;
      while (!logs.includes('memory-service listening') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      const headers = { 'content-type': 'application/json' };
      expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(401);
      const ok = await fetch(url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}` }, body });
      expect(ok.status).toBe(200);
      expect(logs).not.toContain(token);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
