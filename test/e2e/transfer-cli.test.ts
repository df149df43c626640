import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open-database.js';
import { SpaceService, SUBJECTS_AS_NAMES } from '../../src/spaces/space-service.js';
import { runCli } from '../helpers/cli.js';
import { cliArgs } from '../helpers/cli-command.js';
import { engines, TEST_DATABASE_URL, uniqueSchema } from '../helpers/engines.js';

const SECRET = 'sk-proj-4fT9xQ2mLp8RvW3nZk7YbC1dHs6JuE0a';

/** An MCP memory server's memory.jsonl: two entities, a relation, a secret observation and two unusable lines. */
const MCP_MEMORY = [
  JSON.stringify({ type: 'entity', name: 'Alice', entityType: 'person', observations: ['Alice lives in Lyon', 'Alice plays the cello', `Alice's API key is ${SECRET}`] }),
  JSON.stringify({ type: 'entity', name: 'Lyon', entityType: 'city', observations: ['Lyon sits where the Rhône meets the Saône'] }),
  '{"type":"entity","name":"broken"',
  JSON.stringify({ type: 'relation', from: 'Alice', to: 'Lyon', relationType: 'lives_in' }),
  JSON.stringify({ type: 'relation', from: 'Alice', relationType: 'knows' }),
].join('\n');

/**
 * `memory-service export` and `import` as an operator runs them, in their own processes, on both engines:
 * the export format field by field, idempotent re-import, refusals with line numbers and exit code 3, an import
 * killed half-way and run again, and (embedded database) the data-folder lock.
 */
// Every command is its own process that loads the model and opens the database, as an operator's would.
describe.each(engines)('memory-service export and import on %s', { timeout: 240_000 }, (engine) => {
  let dir: string;
  let env: Record<string, string>;
  const schema = uniqueSchema();
  const cli = (args: readonly string[], stdin?: string) => runCli(args, env, stdin);
  const exported = async (subject: string) => {
    const result = await cli(['export', '--sub', subject]);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  /** The commands' database, opened in this process; no CLI process runs meanwhile (PGlite: the data folder's lock). */
  const openCliDatabase = () =>
    openDatabase({
      url: engine === 'postgres' ? TEST_DATABASE_URL : undefined,
      dataDir: join(dir, 'data', 'pglite'),
      schema: engine === 'postgres' ? schema : 'public',
      embeddingDimensions: 512,
    });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'memory-transfer-'));
    env =
      engine === 'pglite'
        ? { MEMORY_SERVICE_DATA_DIR: join(dir, 'data') }
        : { MEMORY_SERVICE_DATABASE_URL: TEST_DATABASE_URL!, MEMORY_SERVICE_DATABASE_SCHEMA: schema };
    // An empty configuration file of its own, so a developer's ./application.ini plays no part.
    writeFileSync(join(dir, 'application.ini'), '');
    env = { ...env, HOME: dir, MEMORY_SERVICE_CONFIG: join(dir, 'application.ini'), MEMORY_SERVICE_LOG_LEVEL: 'silent' };
    writeFileSync(join(dir, 'memory.jsonl'), MCP_MEMORY);
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    if (engine === 'postgres') {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`).finally(() => client.end());
    }
  });

  it("imports an MCP memory server's file, refusing a secret and unusable lines by line number (exit 3), and skips it all the second time", async () => {
    const first = await cli(['import', '--sub', 'alice', join(dir, 'memory.jsonl')]);
    expect(first.code, first.stderr).toBe(3);
    const [summary, ...refusals] = first.stdout.trimEnd().split('\n');
    expect(summary).toBe('Imported 4 memories and 0 tombstones; skipped 0 already stored; refused 3.');
    expect(refusals).toHaveLength(3);
    expect(refusals[0]).toMatch(/^ {2}line 1, observations\[2\]: .*secret/i);
    expect(refusals[1]).toMatch(/^ {2}line 3: /);
    expect(refusals[2]).toMatch(/^ {2}line 5: .*to/);
    // Progress went to stderr (not a terminal: plain lines), and the secret went nowhere.
    expect(first.stderr).toMatch(/100% {2}4 imported/);
    expect(first.stdout + first.stderr).not.toContain(SECRET);

    const again = await cli(['import', '--sub', 'alice', join(dir, 'memory.jsonl')]);
    expect(again.code).toBe(3);
    expect(again.stdout.split('\n')[0]).toBe('Imported 0 memories and 0 tombstones; skipped 4 already stored; refused 3.');

    const [header, ...memories] = await exported('alice');
    expect(header).toEqual({ format: 'memory-service-export', version: 2, exported_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(memories.map((memory) => [memory.text, [...(memory.tags as string[])].sort()])).toEqual([
      ['Alice lives in Lyon', ['alice', 'person']],
      ['Alice plays the cello', ['alice', 'person']],
      ['Lyon sits where the Rhône meets the Saône', ['city', 'lyon']],
      ['Alice lives_in Lyon', ['alice', 'lyon']],
    ]);
  });

  it('exports every field; the file imports into another subject once, and only once', async () => {
    const file = join(dir, 'alice.jsonl');
    const exportedFile = await cli(['export', '--sub', 'alice']);
    expect(exportedFile.code, exportedFile.stderr).toBe(0);
    expect(exportedFile.stderr).toBe('Exported 4 memories and 0 tombstones of alice.\n');
    writeFileSync(file, exportedFile.stdout);
    const alice = exportedFile.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const memory of alice.slice(1)) {
      expect(Object.keys(memory).sort()).toEqual(
        [
          'capture_mode',
          'created_at',
          'embedding_model',
          'expires_at',
          'importance',
          'last_confirmed_at',
          'memory_id',
          'restatements',
          'source_provider',
          'session_id',
          'tags',
          'text',
          'type',
          'updated_at',
        ].sort(),
      );
    }
    expect(await exported('bob')).toHaveLength(1);

    const first = await cli(['import', '--sub', 'bob', file]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('Imported 4 memories and 0 tombstones; skipped 0 already stored; refused 0.\n');
    const second = await cli(['import', '--sub', 'bob', '-'], exportedFile.stdout);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('Imported 0 memories and 0 tombstones; skipped 4 already stored; refused 0.\n');

    // Bob now has Alice's memories, every field but the id the same; Alice's are untouched.
    const strip = (lines: Record<string, unknown>[]) => lines.slice(1).map(({ memory_id: _id, ...rest }) => rest);
    expect(strip(await exported('bob'))).toEqual(strip(alice));
  });

  it('continues an import killed half-way when run again: everything once, nothing twice', async () => {
    const file = join(dir, 'many.jsonl');
    const count = 240;
    writeFileSync(
      file,
      Array.from({ length: count }, (_, i) => JSON.stringify({ type: 'memory', text: `Fact number ${i} about the garden`, tags: ['garden'] })).join('\n'),
    );
    // Killed (SIGKILL: no chance to clean up) once the first batches are stored.
    const killed = await new Promise<{ stderr: string; signal: NodeJS.Signals | null }>((resolve, reject) => {
      const child = spawn(process.execPath, cliArgs('import', '--sub', 'carol', '--batch-size', '8', file), {
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (/\d+ imported/.test(stderr)) child.kill('SIGKILL');
      });
      child.on('error', reject);
      child.on('close', (_code, signal) => resolve({ stderr, signal }));
    });
    expect(killed.signal).toBe('SIGKILL');
    const storedBefore = (await exported('carol')).length - 1;
    expect(storedBefore).toBeGreaterThan(0);
    expect(storedBefore).toBeLessThan(count);

    const resumed = await cli(['import', '--sub', 'carol', '--batch-size', '8', file]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe(`Imported ${count - storedBefore} memories and 0 tombstones; skipped ${storedBefore} already stored; refused 0.\n`);
    const texts = (await exported('carol')).slice(1).map((memory) => memory.text);
    expect(new Set(texts).size).toBe(count);
    expect(texts).toHaveLength(count);
  });

  it('reembed redoes the memories marked stale, then finds nothing left', async () => {
    const db = await openCliDatabase();
    let marked: number;
    try {
      // As migration 0014 marks memories split before it.
      const result = await db.withAllSubjects('marking', (trx) => sql`update memories set passage_embeddings = null`.execute(trx));
      marked = Number(result.numAffectedRows);
    } finally {
      await db.close();
    }
    expect(marked).toBeGreaterThan(200);
    const first = await cli(['reembed', '--batch-size', '16']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe(`Re-embedded ${marked} memories and 0 tombstones with local:universal-sentence-encoder-lite.\n`);
    expect(first.stderr).toContain(`re-embedded ${marked}/${marked} memories`);
    const second = await cli(['reembed']);
    expect(second.stdout).toBe('Re-embedded 0 memories and 0 tombstones with local:universal-sentence-encoder-lite.\n');
  });

  it('exports and imports one space with --space, by name or id, as the subject may use it', async () => {
    const db = await openCliDatabase();
    let household: string;
    try {
      const spaces = new SpaceService(db, SUBJECTS_AS_NAMES);
      household = (await spaces.create('erin', 'Household')).id;
      await spaces.share('erin', household, 'frank', 'writer');
      await spaces.share('erin', household, 'gus', 'reader');
    } finally {
      await db.close();
    }
    const personal = await exported('erin');
    const imported = await cli(['import', '--sub', 'erin', '--space', 'household', join(dir, 'memory.jsonl')]);
    expect(imported.code, imported.stderr).toBe(3);
    expect(imported.stdout.split('\n')[0]).toBe('Imported 4 memories and 0 tombstones; skipped 0 already stored; refused 3.');
    expect(await exported('erin')).toHaveLength(personal.length);

    const file = join(dir, 'household.jsonl');
    const fromSpace = await cli(['export', '--sub', 'erin', '--space', 'Household']);
    expect(fromSpace.code, fromSpace.stderr).toBe(0);
    expect(fromSpace.stderr).toBe('Exported 4 memories and 0 tombstones of erin in space "Household".\n');
    writeFileSync(file, fromSpace.stdout);
    // A member reaches the same space by its id: the same memories, so nothing new is stored.
    const again = await cli(['import', '--sub', 'frank', '--space', household, file]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.split('\n')[0]).toBe('Imported 0 memories and 0 tombstones; skipped 4 already stored; refused 0.');
    const reader = await cli(['export', '--sub', 'gus', '--space', household]);
    expect(reader.stdout.trimEnd().split('\n').slice(1)).toEqual(fromSpace.stdout.trimEnd().split('\n').slice(1));
    // A reader may not import; a non-member finds no such space; neither changes anything.
    for (const [args, message] of [
      [['import', '--sub', 'gus', '--space', household, file], /^FORBIDDEN: /],
      [['import', '--sub', 'henry', '--space', household, file], /^NOT_FOUND: /],
      [['export', '--sub', 'henry', '--space', 'Household'], /^NOT_FOUND: /],
    ] as const) {
      const refused = await cli(args);
      expect(refused.code, args.join(' ')).toBe(1);
      expect(refused.stderr, args.join(' ')).toMatch(message);
      expect(refused.stdout).toBe('');
    }
    expect((await cli(['export', '--sub', 'erin', '--space', household])).stdout.trimEnd().split('\n')).toHaveLength(5);
  });

  it('refuses bad usage with exit code 2, changing nothing', async () => {
    for (const [args, message] of [
      [['export'], /--sub/],
      [['export', '--sub', 'alice', 'out.jsonl'], /redirect standard output/],
      [['import', '--sub', 'alice'], /exactly one FILE/],
      [['import', '--sub', 'alice', join(dir, 'missing.jsonl')], /cannot read .*ENOENT/],
      [['import', '--sub', 'alice', '--batch-size', '0', join(dir, 'memory.jsonl')], /--batch-size/],
    ] as const) {
      const result = await cli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
  });

  it.runIf(engine === 'pglite')('says clearly that the embedded database is in use by another process, and touches nothing', async () => {
    // This test process stands for a running server holding the data folder.
    const lock = join(dir, 'data', 'pglite', 'memory-service.lock');
    mkdirSync(join(dir, 'data', 'pglite'), { recursive: true });
    const { hostname } = await import('node:os');
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname() }));
    try {
      const result = await cli(['import', '--sub', 'dave', join(dir, 'memory.jsonl')]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`is in use by another memory-service process (pid ${process.pid})`);
      expect(result.stderr).toContain('stop the server first');
    } finally {
      rmSync(lock);
    }
    expect(await exported('dave')).toHaveLength(1);
  });
});
