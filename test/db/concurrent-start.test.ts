import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open-database.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../helpers/engines.js';

/**
 * Replicas starting together against a database that has never seen the service: each one creates the schema,
 * migrates, builds the vector index and prepares the row-level-security role, and PostgreSQL's catalogs refuse
 * concurrent `create … if not exists` of the same name. They take turns instead.
 */
describe.skipIf(TEST_DATABASE_URL === undefined)('several processes preparing one new schema at once (PostgreSQL)', () => {
  it('all open it, none fails', async () => {
    for (let round = 0; round < 3; round++) {
      const schema = uniqueSchema();
      try {
        const opened = await Promise.allSettled(
          Array.from({ length: 3 }, () => openDatabase({ url: TEST_DATABASE_URL, dataDir: '/nonexistent', schema, embeddingDimensions: 64, poolSize: 2 })),
        );
        const failures = opened.flatMap((result) => (result.status === 'rejected' ? [String((result.reason as Error).message)] : []));
        for (const result of opened) if (result.status === 'fulfilled') await result.value.close();
        expect(failures).toEqual([]);
      } finally {
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        await client.query(`drop schema if exists "${schema}" cascade`);
        await client.end();
      }
    }
  });
});
