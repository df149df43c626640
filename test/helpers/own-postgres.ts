import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './test-server.js';

const run = promisify(execFile);

/**
 * A throwaway PostgreSQL cluster of the test's own, for tests that stop, start or freeze the database: the
 * shared cluster on :5432 must never be stopped. Needs root (the cluster runs as the `postgres` user) and the
 * PostgreSQL binaries with pgvector; `faultTestsUnavailable()` says why not, and MEMORY_SERVICE_TEST_FAULTS=1
 * (set by .ci/run) turns that skip into a failure.
 */
export interface OwnPostgres {
  /** postgres:// URL of a non-superuser owning the database, as the service would use. */
  readonly url: string;
  readonly port: number;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Ends the backends the service opened (application_name memory-service); returns how many. */
  terminateServiceBackends(): Promise<number>;
  /** Runs SQL as the superuser in the service's database. */
  admin<T extends pg.QueryResultRow>(statement: string, values?: unknown[]): Promise<T[]>;
  /** Stops the cluster (immediately) and deletes its files. Safe to call twice. */
  remove(): Promise<void>;
}

export const FAULT_TESTS_REQUIRED = process.env.MEMORY_SERVICE_TEST_FAULTS === '1';

/** The newest installed PostgreSQL whose pgvector is installed too. */
function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  const version = versions.find((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(`/usr/share/postgresql/${v}/extension/vector.control`));
  return version === undefined ? undefined : join(root, version, 'bin');
}

/** Why the fault tests that need their own cluster or a mount cannot run here; undefined when they can. */
export function faultTestsUnavailable(needs: { postgres?: boolean } = {}): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  if (userInfo().uid !== 0) return 'not root';
  if (needs.postgres === true && postgresBin() === undefined) return 'no PostgreSQL binaries with pgvector under /usr/lib/postgresql';
  return undefined;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBin();
  if (bin === undefined) throw new Error('no PostgreSQL binaries with pgvector');
  const dir = mkdtempSync(join(tmpdir(), 'memory-service-pg-'));
  const data = join(dir, 'data');
  const { stdout: uid } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  chownSync(dir, Number(uid), Number(gid));
  const asPostgres = (command: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args], { timeout: 60_000 });
  const port = await freePort();
  let started = false;
  const superuser = () => new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'memory_service', connectionTimeoutMillis: 5_000 });

  const cluster: OwnPostgres = {
    url: `postgres://memory_service:memory_service@127.0.0.1:${port}/memory_service`,
    port,
    async stop(mode = 'fast') {
      await asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
      started = false;
    },
    async start() {
      await asPostgres('pg_ctl', [
        '-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '30',
        '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`,
        'start',
      ]);
      started = true;
    },
    async terminateServiceBackends() {
      const rows = await cluster.admin<{ ended: boolean }>(
        "select pg_terminate_backend(pid) as ended from pg_stat_activity where application_name = 'memory-service'",
      );
      return rows.filter((row) => row.ended).length;
    },
    async admin<T extends pg.QueryResultRow>(statement: string, values: unknown[] = []) {
      const client = superuser();
      await client.connect();
      try {
        return (await client.query<T>(statement, values)).rows;
      } finally {
        await client.end();
      }
    },
    async remove() {
      if (started || existsSync(join(data, 'postmaster.pid'))) await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      started = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    await asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await cluster.start();
    const setup = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    await setup.connect();
    try {
      await setup.query("create role memory_service login password 'memory_service'");
      await setup.query('create database memory_service owner memory_service');
    } finally {
      await setup.end();
    }
    await cluster.admin('create extension vector');
  } catch (error) {
    const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : '';
    await cluster.remove();
    throw new Error(`could not start a PostgreSQL cluster: ${(error as Error).message}\n${log}`, { cause: error });
  }
  return cluster;
}
