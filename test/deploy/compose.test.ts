import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeProject, dockerSkipReason, run, type ComposeProject } from '../helpers/docker.js';
import { freePort } from '../helpers/test-server.js';

const skip = dockerSkipReason();
if (skip !== undefined) console.warn(skip);

const SERVICE = 'memory-service';

/**
 * The repository's Dockerfile and docker-compose.yml, unchanged, as a user runs them: `docker compose up`
 * builds the image and starts PostgreSQL and the service; everything else is driven from the host. The
 * project has its own name and published port, and is removed with its volumes at the end.
 */
describe.skipIf(skip !== undefined)('docker compose up', () => {
  let project: ComposeProject;
  let baseUrl: string;
  let token: string;

  const callTool = async (name: string, args: Record<string, unknown>) => {
    const response = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    const body = (await response.json()) as { result?: { isError?: boolean; structuredContent?: Record<string, unknown> } };
    return { status: response.status, isError: body.result === undefined || body.result.isError === true, structured: body.result?.structuredContent };
  };

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    project = composeProject(`memory-service-test-${process.pid}-${randomBytes(3).toString('hex')}`, {
      MEMORY_SERVICE_PUBLISHED_PORT: String(port),
      MEMORY_SERVICE_BASE_URL: baseUrl,
      POSTGRES_PASSWORD: randomBytes(12).toString('hex'),
    });
    await project.compose(['up', '--detach', '--build'], 15 * 60_000);
    await project.waitHealthy(SERVICE, 5 * 60_000);
  }, 20 * 60_000);

  afterAll(async () => {
    await project?.destroy();
  }, 200_000);

  it('gives a token through `docker compose exec`; remember and recall work over /mcp', async () => {
    token = await project.exec(SERVICE, ['node', 'bin/memory-service.js', 'token', 'issue', '--sub', 'alice']);
    expect(decodeJwt(token)).toMatchObject({ iss: baseUrl, aud: `${baseUrl}/mcp`, sub: 'alice' });

    const anonymous = await fetch(`${baseUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain(`resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/mcp"`);

    const client = new Client({ name: 'compose-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const remembered = await client.callTool({ name: 'remember', arguments: { text: 'Alice keeps bees on her balcony' } });
      expect(remembered.isError).toBeFalsy();
      const recalled = await client.callTool({ name: 'recall', arguments: { query: 'What does Alice keep on the balcony?' } });
      expect(JSON.stringify(recalled.structuredContent)).toContain('bees');
    } finally {
      await client.close();
    }
  });

  it('runs as a non-root user, with the OAuth state file on its own volume outside /app', async () => {
    const container = await project.container(SERVICE);
    expect(container.user).toBe('node');
    expect(await project.exec(SERVICE, ['id', '-u'])).not.toBe('0');

    const script = `const f = process.env.MEMORY_SERVICE_OAUTH_AS_INI_FILE, s = require('node:fs').statSync(f);
      console.log(JSON.stringify({ file: f, uid: s.uid, mode: (s.mode & 0o777).toString(8), cwd: process.cwd() }))`;
    const state = JSON.parse(await project.exec(SERVICE, ['node', '-e', script])) as { file: string; uid: number; mode: string; cwd: string };
    expect(state.cwd).toBe('/app');
    expect(posix.isAbsolute(state.file) && !state.file.startsWith('/app/')).toBe(true);
    expect(String(state.uid)).toBe(await project.exec(SERVICE, ['id', '-u']));
    expect(state.mode).toBe('600');

    const volumeAt = (path: string) => container.mounts.find((mount) => mount.type === 'volume' && (path === mount.destination || path.startsWith(`${mount.destination}/`)));
    expect(volumeAt(state.file)?.name).toBe(`${project.name}_memory-state`);
    expect(volumeAt('/var/lib/memory-service/data')?.name).toBe(`${project.name}_memory-data`);
    const postgres = await project.container('postgres');
    expect(postgres.mounts.find((mount) => mount.destination === '/var/lib/postgresql/data')?.name).toBe(`${project.name}_postgres-data`);
  });

  it("runs PostgreSQL with a buffer cache sized for large subjects and room for parallel workers' shared memory", async () => {
    const show = (setting: string) => project.exec('postgres', ['psql', '-U', 'memory', '-d', 'memory', '-Atc', `show ${setting}`]);
    expect(await show('shared_buffers')).toBe('1GB');
    const shm = await project.exec('postgres', ['df', '--output=size', '-B1M', '/dev/shm']);
    expect(Number(shm.split('\n').at(-1))).toBeGreaterThanOrEqual(256);
  });

  it('holds compiled code and production dependencies only', async () => {
    const script = `const fs = require('node:fs');
      console.log(JSON.stringify({ app: fs.readdirSync('/app').sort(), dev: ${JSON.stringify(['vitest', 'typescript', 'tsx', 'eslint', 'playwright-core'])}.filter((name) => fs.existsSync('/app/node_modules/' + name)) }))`;
    const contents = JSON.parse(await project.exec(SERVICE, ['node', '-e', script])) as { app: string[]; dev: string[] };
    expect(contents).toEqual({ app: ['application.ini.example', 'bin', 'dist', 'node_modules', 'package.json'], dev: [] });
  });

  it('survives a restart of the database container without being restarted itself', async () => {
    const before = await project.container(SERVICE);
    // A request just before the restart leaves idle connections in the pool for the restart to break.
    expect((await callTool('recall', { query: 'bees' })).isError).toBe(false);
    await project.compose(['restart', 'postgres'], 120_000);

    const deadline = Date.now() + 60_000;
    let recalled = await callTool('recall', { query: 'bees' }).catch(() => undefined);
    while ((recalled === undefined || recalled.isError) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      recalled = await callTool('recall', { query: 'bees' }).catch(() => undefined);
    }
    expect(recalled?.status).toBe(200);
    expect(JSON.stringify(recalled?.structured)).toContain('bees');

    const after = await project.container(SERVICE);
    expect(after).toMatchObject({ id: before.id, startedAt: before.startedAt, restartCount: before.restartCount, running: true });
    const logs = (await project.compose(['logs', '--no-color', SERVICE])).stdout;
    // The restart ends every pooled connection with 57P01; the service logs it as a database error and carries on.
    expect(logs).toMatch(/"code":"57P01"[^\n]*"msg":"database error"/);
  });

  it('stops on SIGTERM with exit code 0, and keeps memories and the signing key across `down` and `up` (volumes)', async () => {
    await project.compose(['stop', '--timeout', '30', SERVICE], 120_000);
    expect(await project.container(SERVICE)).toMatchObject({ running: false, exitCode: 0 });
    await project.compose(['down', '--timeout', '30'], 180_000);
    expect((await project.compose(['ps', '-q', '--all'])).stdout.trim()).toBe('');
    await project.compose(['up', '--detach'], 10 * 60_000);
    await project.waitHealthy(SERVICE, 5 * 60_000);
    // The token issued before `down` still verifies (same key, from the state volume) and finds the memory.
    const recalled = await callTool('recall', { query: 'What does Alice keep on the balcony?' });
    expect(recalled.status).toBe(200);
    expect(JSON.stringify(recalled.structured)).toContain('bees');
  });

  it('`down --volumes` leaves no container, network or volume behind', async () => {
    await project.destroy();
    const label = `label=com.docker.compose.project=${project.name}`;
    expect((await run('docker', ['ps', '--all', '--quiet', '--filter', label])).stdout.trim()).toBe('');
    expect((await run('docker', ['volume', 'ls', '--quiet', '--filter', label])).stdout.trim()).toBe('');
    expect((await run('docker', ['network', 'ls', '--quiet', '--filter', label])).stdout.trim()).toBe('');
  });
});
