import { execFile } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { openPGlite } from '../../src/db/pglite-open.js';
import { runCli } from '../helpers/cli.js';
import { FAULT_TESTS_REQUIRED, faultTestsUnavailable } from '../helpers/own-postgres.js';
import { issueToken, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { subjectCountMismatchesSql } from '../helpers/stored-counts.js';
import { freePort } from '../helpers/test-server.js';

const run = promisify(execFile);

/**
 * The disk under DataDir fills up. PGlite's data folder and the users file live on a small tmpfs the test mounts;
 * a filler file takes the rest. Writes answer DATABASE_ERROR (never a 500, never a crash), reads keep answering,
 * the process stays up, and once the filler is deleted the same process stores again. Everything acknowledged
 * is intact and the data folder opens cleanly afterwards. The users file, saved while the disk is full, keeps
 * its old content whole, leaves no temporary file behind, and the CLI says the disk is full.
 */
const unavailable = faultTestsUnavailable();
const SIZE_MB = 96;
const CALL_BOUND_MS = 10_000;

describe.skipIf(unavailable !== undefined && !FAULT_TESTS_REQUIRED)('a full disk under DataDir (PGlite on a tmpfs)', () => {
  const mountPoint = mkdtempSync(join(tmpdir(), 'memory-full-disk-'));
  const filler = join(mountPoint, 'filler');
  let mounted = false;
  let server: ServerProcess | undefined;
  let env: NodeJS.ProcessEnv;
  let token: string;

  beforeAll(async () => {
    if (unavailable !== undefined) throw new Error(`MEMORY_SERVICE_TEST_FAULTS=1 but the fault tests cannot run here: ${unavailable}`);
    await run('mount', ['-t', 'tmpfs', '-o', `size=${SIZE_MB}m,mode=0700`, 'tmpfs', mountPoint]);
    mounted = true;
    const port = await freePort();
    env = {
      HOME: mountPoint,
      MEMORY_SERVICE_DATA_DIR: mountPoint,
      MEMORY_SERVICE_PORT: String(port),
      MEMORY_SERVICE_LOG_LEVEL: 'warn',
      MEMORY_SERVICE_LOCAL_MODEL_WORKERS: '1',
    };
    server = startServerProcess(env, port);
    await server.ready();
    token = await issueToken(env, 'ana');
  }, 240_000);

  afterAll(async () => {
    if (server !== undefined && server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    if (mounted) await run('umount', [mountPoint]).catch(() => run('umount', ['-l', mountPoint]));
    rmSync(mountPoint, { recursive: true, force: true });
  });

  let id = 0;
  const call = async (name: string, args: Record<string, unknown>): Promise<{ status: number; ok: boolean; code: string | undefined; memoryId: number | undefined; ms: number }> => {
    const started = Date.now();
    const response = await fetch(server!.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }),
      signal: AbortSignal.timeout(60_000),
    });
    const body = (await response.json().catch(() => ({}))) as { result?: { isError?: boolean; structuredContent?: { memory_id?: number; error?: { code: string } } } };
    const result = body.result;
    return {
      status: response.status,
      ok: result !== undefined && result.isError !== true,
      code: result?.structuredContent?.error?.code,
      memoryId: result?.structuredContent?.memory_id,
      ms: Date.now() - started,
    };
  };
  const text = (n: number) => `full disk note ${n}: the user keeps spare keys in box ${n}. ${'Long detail about the box and its contents. '.repeat(90)}`.slice(0, 4_000);

  /** Fills the filesystem with one file until a write fails for want of space. */
  const fillDisk = () => {
    const fd = openSync(filler, 'w');
    const chunk = Buffer.alloc(1 << 20, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      closeSync(fd);
    }
  };

  it('refuses writes with DATABASE_ERROR while full, keeps what was acknowledged, and stores again once space is freed', async () => {
    const acknowledged = new Map<number, string>();
    const refused: string[] = [];
    let n = 0;
    for (; n < 5; n++) {
      const answer = await call('remember', { text: text(n), dedup_policy: 'insert' });
      expect(answer).toMatchObject({ status: 200, ok: true });
      acknowledged.set(answer.memoryId!, text(n));
    }
    const users = new UserStore(usersFilePath(mountPoint));
    await users.add('ana', 'correct horse battery');
    const usersBefore = readFileSync(users.path, 'utf8');

    fillDisk();

    // Writes until the database meets the full disk: each one stored or refused with DATABASE_ERROR, within bounds.
    let errors = 0;
    for (let tries = 0; errors < 5 && tries < 400; tries++, n++) {
      const answer = await call('remember', { text: text(n), dedup_policy: 'insert' });
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(CALL_BOUND_MS);
      if (answer.ok) {
        acknowledged.set(answer.memoryId!, text(n));
      } else {
        expect(answer.code).toBe('DATABASE_ERROR');
        refused.push(text(n));
        errors++;
      }
    }
    expect(errors).toBe(5);
    // The process is up and says so; reads answer (results, or DATABASE_ERROR while the engine reopens).
    expect((await fetch(`${server!.url}/healthz`)).status).toBe(200);
    const recall = await call('recall', { query: 'spare keys box' });
    expect(recall.status).toBe(200);
    expect(recall.ok || recall.code === 'DATABASE_ERROR').toBe(true);

    // The users file, saved while the disk is full: a clear error, the old content whole, no temporary file.
    await expect(users.add('ben', 'another long password')).rejects.toThrow(/could not save .*users\.json: the disk is full/);
    const cli = await runCli(['user', 'add', 'cleo'], { HOME: mountPoint, MEMORY_SERVICE_DATA_DIR: mountPoint }, 'a third long password\n');
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/could not save .*users\.json: the disk is full \(ENOSPC\); the file was left as it was/);
    expect(readFileSync(users.path, 'utf8')).toBe(usersBefore);
    expect(readdirSync(mountPoint).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(new UserStore(users.path).list().map((user) => user.name)).toEqual(['ana']);

    // Space comes back: the same process stores again, without a restart.
    rmSync(filler);
    const freedAt = Date.now();
    let stored: number | undefined;
    while (stored === undefined && Date.now() - freedAt < 30_000) {
      const answer = await call('remember', { text: text(n), dedup_policy: 'insert' });
      expect(answer.status).toBe(200);
      if (answer.ok) {
        stored = answer.memoryId;
        acknowledged.set(answer.memoryId!, text(n));
      } else {
        expect(answer.code).toBe('DATABASE_ERROR');
        refused.push(text(n));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      n++;
    }
    expect(stored, 'a remember succeeds within 30 s of freeing space').toBeDefined();
    const reopened = server!.output().includes('embedded database reopened');
    console.info(`full disk: ${errors} DATABASE_ERRORs while full; stored again ${Date.now() - freedAt} ms after space was freed; engine reopened: ${reopened}`);
    for (let more = 0; more < 3; more++, n++) {
      const answer = await call('remember', { text: text(n), dedup_policy: 'insert' });
      expect(answer).toMatchObject({ status: 200, ok: true });
      acknowledged.set(answer.memoryId!, text(n));
    }
    expect(server!.child.exitCode).toBeNull();
    await users.add('ben', 'another long password');
    expect(new UserStore(users.path).list().map((user) => user.name)).toEqual(['ana', 'ben']);

    // A graceful stop, then the data folder opens cleanly and holds every acknowledged memory and no refused one.
    server!.child.kill('SIGTERM');
    expect(await server!.exited).toBe(0);
    expect(existsSync(join(mountPoint, 'pglite'))).toBe(true);
    const pglite = await openPGlite(join(mountPoint, 'pglite'));
    try {
      const rows = (await pglite.query<{ id: number; text: string }>('select id, text from public.memories')).rows;
      const stored = new Map(rows.map((row) => [Number(row.id), row.text]));
      for (const [memoryId, memoryText] of acknowledged) expect(stored.get(memoryId), `memory ${memoryId}`).toBe(memoryText);
      const storedTexts = new Set(stored.values());
      for (const refusedText of refused) expect(storedTexts.has(refusedText), 'a refused memory is stored').toBe(false);
      const mismatches = await pglite.query<{ n: number }>(subjectCountMismatchesSql('public'));
      expect(mismatches.rows[0]!.n).toBe(0);
    } finally {
      await pglite.close();
    }
  }, 300_000);
});
