import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeSchema } from '../../src/db/describe-schema.js';
import { openDatabase } from '../../src/db/open-database.js';
import { TEST_DATABASE_URL, engines, uniqueSchema } from '../helpers/engines.js';
import { sharedPGlite } from '../helpers/shared.js';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';
import pg from 'pg';

const COMMITTED = new URL('../../db/schema.sql', import.meta.url);

describe.each(engines)('committed schema dump on %s', (engine) => {
  it('matches the migrated schema (run `npm run schema:dump` after changing a migration)', async () => {
    const schema = uniqueSchema();
    const pglite = engine === 'pglite' ? await sharedPGlite() : undefined;
    const handle = await openDatabase({ url: engine === 'postgres' ? TEST_DATABASE_URL : undefined, dataDir: 'memory://', schema, embeddingDimensions: 512, pglite });
    await handle.close();
    const db = engine === 'postgres'
      ? new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 }) }) })
      : new Kysely<unknown>({ dialect: new PGliteDialect(pglite!) });
    try {
      const dump = await describeSchema(db, schema);
      expect(dump).toBe(readFileSync(COMMITTED, 'utf8'));
    } finally {
      if (engine === 'postgres') {
        await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
        await db.destroy();
      }
    }
  });
});
