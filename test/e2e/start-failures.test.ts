import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { freePort } from '../helpers/test-server.js';

/**
 * `serve` that cannot start ends: one line on stderr saying what and what to change, exit code 1, and nothing left
 * open (a worker thread, a pool or the data folder's lock would keep the process alive past the bound below, or
 * leave the lock behind). The bound only catches a hang; how fast it ends is for the start-up figures in bench/.
 */
const HANG_MS = 60_000;

const dirs: string[] = [];
const servers: Server[] = [];
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function home(): { env: Record<string, string>; dataDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'memory-start-'));
  dirs.push(dir);
  const dataDir = join(dir, 'data');
  return { dataDir, env: { HOME: dir, MEMORY_SERVICE_DATA_DIR: dataDir, MEMORY_SERVICE_LOG_LEVEL: 'info' } };
}

async function occupiedPort(): Promise<number> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

async function serve(env: Record<string, string>): Promise<CliResult> {
  const port = env.MEMORY_SERVICE_PORT ?? String(await freePort());
  return runCli(['serve'], { MEMORY_SERVICE_HOST: '127.0.0.1', ...env, MEMORY_SERVICE_PORT: port }, undefined, HANG_MS);
}

function expectOneLineFailure(result: CliResult, line: RegExp): void {
  expect(result.signal).toBeNull();
  expect(result.code).toBe(1);
  expect(result.stderr.split('\n').filter((text) => text !== '')).toEqual([expect.stringMatching(line)]);
}

const lockFile = (dataDir: string) => join(dataDir, 'pglite', 'memory-service.lock');

// A start that gets as far as migrating a new data folder and loading the model takes a while on a busy machine.
describe('serve ends when it cannot start', { timeout: HANG_MS + 30_000 }, () => {
  it('a port in use: said before anything is opened', async () => {
    const { env, dataDir } = home();
    const port = await occupiedPort();
    const result = await serve({ ...env, MEMORY_SERVICE_PORT: String(port) });
    expectOneLineFailure(result, new RegExp(`^cannot listen on 127\\.0\\.0\\.1:${port}: the port is already in use; .*another Port \\(MEMORY_SERVICE_PORT\\)$`));
    expect(existsSync(lockFile(dataDir))).toBe(false);
  });

  it('a listen that fails once everything is open (MetricsPort = Port) closes it all: the data folder is unlocked', async () => {
    const { env, dataDir } = home();
    const port = String(await freePort());
    const result = await serve({ ...env, MEMORY_SERVICE_PORT: port, MEMORY_SERVICE_METRICS_PORT: port });
    expectOneLineFailure(result, /^cannot listen on 127\.0\.0\.1:\d+: the port is already in use; .*another MetricsPort \(MEMORY_SERVICE_METRICS_PORT\)$/);
    // It had opened the database (and migrated it) before the second listen failed.
    expect(existsSync(join(dataDir, 'pglite'))).toBe(true);
    expect(existsSync(lockFile(dataDir))).toBe(false);
  });

  it('a data folder another running process holds: refused, that process’s lock left as it was', async () => {
    const { env, dataDir } = home();
    mkdirSync(join(dataDir, 'pglite'), { recursive: true });
    // This test's own process: alive, on this host, and not the child.
    const holder = JSON.stringify({ pid: process.pid, host: hostname() });
    writeFileSync(lockFile(dataDir), holder);
    const result = await serve(env);
    expectOneLineFailure(result, new RegExp(`^DATABASE_ERROR: the data folder .* is in use by another memory-service process \\(pid ${process.pid}\\).*stop the server first`));
    expect(readFileSync(lockFile(dataDir), 'utf8')).toBe(holder);
  });

  it('PostgreSQL that nothing answers: says where and what to change, never the password', async () => {
    const { env } = home();
    const port = await freePort();
    const result = await serve({ ...env, MEMORY_SERVICE_DATABASE_URL: `postgres://someone:s3cret-pw@127.0.0.1:${port}/memories` });
    expectOneLineFailure(result, new RegExp(`^DATABASE_ERROR: cannot use PostgreSQL at 127\\.0\\.0\\.1:${port}/memories: nothing listens there; start PostgreSQL, or correct .*DatabaseUrl`));
    expect(result.stderr + result.stdout).not.toContain('s3cret-pw');
  });

  it.runIf(TEST_DATABASE_URL !== undefined)('PostgreSQL refusing the password: says so, never the password', async () => {
    const { env } = home();
    const url = new URL(TEST_DATABASE_URL!);
    url.password = 'not-the-password';
    const result = await serve({ ...env, MEMORY_SERVICE_DATABASE_URL: url.href });
    expectOneLineFailure(result, /^DATABASE_ERROR: cannot use PostgreSQL at .*: it refused the password; correct the user and password in DatabaseUrl/);
    expect(result.stderr + result.stdout).not.toContain('not-the-password');
  });

  it('a host that is not this machine’s', async () => {
    const { env } = home();
    // TEST-NET-1 (RFC 5737): never assigned to a machine.
    const result = await serve({ ...env, MEMORY_SERVICE_HOST: '192.0.2.1' });
    expectOneLineFailure(result, /^cannot listen on 192\.0\.2\.1:\d+: 192\.0\.2\.1 is not an address of this machine; correct Host/);
  });

  it('bad configuration: exit code 2 (bad usage or configuration), nothing opened', async () => {
    const { env, dataDir } = home();
    const result = await serve({ ...env, MEMORY_SERVICE_EMBEDDING_PROVIDER: 'word2vec' });
    expect(result.signal).toBeNull();
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Invalid configuration[\s\S]*EmbeddingProvider:/);
    expect(existsSync(dataDir)).toBe(false);
  });
});
