import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPGlite } from '../../src/db/pglite-open.js';
import { engines, TEST_DATABASE_URL, uniqueSchema } from '../helpers/engines.js';
import { issueToken, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { freePort } from '../helpers/test-server.js';
import { subjectCountMismatchesSql } from '../helpers/stored-counts.js';
import { acknowledged, startTraffic, type CallRecord } from '../helpers/traffic.js';

/**
 * `kill -9` of the real server process in the middle of a burst of concurrent remembers, three times in a row:
 * after each restart the data folder (or schema) opens cleanly and serves, and in the end every memory that was
 * acknowledged is stored with its text, and the derived rows (full-text terms, per-subject counts) agree.
 */
const ROUNDS = 3;

describe.each(engines)('kill -9 during concurrent writes on %s', (engine) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'memory-crash-'));
  const schema = engine === 'postgres' ? uniqueSchema() : 'public';
  let server: ServerProcess | undefined;

  afterAll(async () => {
    if (server !== undefined && server.child.exitCode === null) server.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    if (engine === 'postgres') {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    }
  });

  it(`loses no acknowledged memory over ${ROUNDS} rounds`, async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      HOME: dataDir,
      MEMORY_SERVICE_DATA_DIR: dataDir,
      MEMORY_SERVICE_PORT: String(port),
      MEMORY_SERVICE_LOG_LEVEL: 'warn',
      MEMORY_SERVICE_DATABASE_SCHEMA: schema,
      MEMORY_SERVICE_LOCAL_MODEL_WORKERS: '1',
      ...(engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: TEST_DATABASE_URL } : {}),
    };
    const calls: CallRecord[] = [];
    let tokens: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      server = startServerProcess(env, port);
      // Each start after the first opens what the killed process left behind.
      await server.ready();
      if (tokens.length === 0) tokens = await Promise.all(['ana', 'ben', 'cleo', 'dan'].map((subject) => issueToken(env, subject)));
      // Texts of ~200 distinct words: each remember writes its words in steps, so a kill can fall between them.
      const traffic = startTraffic({ mcpUrl: server.mcpUrl, tokens, recall: false, label: `round ${round}`, textChars: 1_500 });
      const target = 10 + Math.floor(Math.random() * 10);
      while (acknowledged(traffic.calls).length < target) await new Promise((resolve) => setTimeout(resolve, 10));
      server.child.kill('SIGKILL');
      expect(await server.exited).toBeNull();
      calls.push(...(await traffic.stop()));
      // Calls cut by the kill failed at the network; nothing else may have failed.
      expect(calls.filter((c) => c.error !== undefined && c.error !== 'network')).toEqual([]);
    }

    // One more start: it must open cleanly; then a graceful stop, so the files can be read here.
    server = startServerProcess(env, port);
    await server.ready();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const rows = await readState(engine, dataDir, schema);
    const acked = acknowledged(calls);
    expect(acked.length).toBeGreaterThanOrEqual(ROUNDS * 10);
    for (const call of acked) expect(rows.texts.get(call.memoryId!), `memory ${call.memoryId}`).toBe(call.text);
    expect(rows.countMismatches).toBe(0);
    expect(rows.memoriesWithIncompleteTerms).toBe(0);
    expect(rows.pendingTerms).toBe(0);
    console.info(`kill -9 on ${engine}: ${ROUNDS} rounds, ${acked.length} acknowledged memories, all present after restart`);
  }, 600_000);
});

interface StoredState {
  readonly texts: Map<number, string>;
  /** Subjects whose subject_stats counts differ from their memories (all, and those in conversations). */
  readonly countMismatches: number;
  /** Memories whose memory_terms rows are not one per lexeme. */
  readonly memoriesWithIncompleteTerms: number;
  /** Memories still marked as having words to write. */
  readonly pendingTerms: number;
}

async function readState(engine: string, dataDir: string, schema: string): Promise<StoredState> {
  const queries = {
    texts: `select id, text from "${schema}".memories`,
    mismatches: subjectCountMismatchesSql(schema),
    // Every memory has a memory_terms row per lexeme once the restart has finished any steps a kill cut short.
    incomplete: `select count(*)::int as n from "${schema}".memories m
                  where length(m.search_vector) <> (select count(*) from "${schema}".memory_terms t where t.memory_id = m.id)`,
    pending: `select count(*)::int as n from "${schema}".memory_terms_pending`,
  };
  let run: (sql: string) => Promise<Record<string, unknown>[]>;
  let close: () => Promise<void>;
  if (engine === 'pglite') {
    const pglite = await openPGlite(join(dataDir, 'pglite'));
    run = async (sql) => (await pglite.query<Record<string, unknown>>(sql)).rows;
    close = () => pglite.close();
  } else {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    // Row-level security is forced: read every subject's rows, as an operator would.
    await client.query('set memory_service.all_subjects = on');
    run = async (sql) => (await client.query<Record<string, unknown>>(sql)).rows;
    close = () => client.end();
  }
  try {
    const texts = new Map((await run(queries.texts)).map((row) => [Number(row.id), String(row.text)]));
    const [mismatches] = await run(queries.mismatches);
    const [incomplete] = await run(queries.incomplete);
    const [pending] = await run(queries.pending);
    return { texts, countMismatches: Number(mismatches!.n), memoriesWithIncompleteTerms: Number(incomplete!.n), pendingTerms: Number(pending!.n) };
  } finally {
    await close();
  }
}
