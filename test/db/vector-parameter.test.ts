import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { realArray, storedVector, toVectorLiteral, vectorParameter } from '../../src/db/pgvector.js';
import { engines } from '../helpers/engines.js';
import { mulberry32 } from '../helpers/prng.js';
import { closeTestDatabase, openTestDatabase, sharedPGlite } from '../helpers/shared.js';

/**
 * A vector travels as a real[] parameter in binary (vectorParameter, realArray) on both engines: the database must
 * read exactly the vector that pgvector's text form gives.
 */
describe.each(engines)('the query vector as a parameter on %s', (engine) => {
  let db: DatabaseHandle;
  beforeAll(async () => {
    db = await openTestDatabase(engine, { embeddingDimensions: 512 });
  });
  afterAll(() => closeTestDatabase(db));

  // Equal as vectors, number by number (-0 equals 0: JavaScript's text form writes -0 as 0, binary keeps it).
  it('reads the same 512 numbers as the vector’s text form, for unit vectors and awkward values', async () => {
    const random = mulberry32(23);
    const vectors = Array.from({ length: 40 }, () => {
      const raw = Array.from({ length: 512 }, () => random() - 0.5);
      const norm = Math.hypot(...raw);
      return raw.map((value) => value / norm);
    });
    vectors.push(Array.from({ length: 512 }, (_, i) => [0, -0, 1e-45, 3.4e38, -1 / 3, 0.1, 1e-7, 123456.789][i % 8]!));
    const mismatched = await db.withSubject('anyone', 'comparing', async (trx) => {
      let count = 0;
      for (const values of vectors) {
        const vector = storedVector(values, 'm');
        const { rows } = await sql<{ same: boolean; dims: number }>`
          select ${vectorParameter(vector)} = ${toVectorLiteral(values)}::vector as same,
                 vector_dims(${vectorParameter(vector, 512)}) as dims`.execute(trx);
        expect(rows[0]!.dims).toBe(512);
        if (!rows[0]!.same) count += 1;
      }
      return count;
    });
    expect(mismatched).toBe(0);
  });

  it('reads a real[] parameter in binary, element by element', async () => {
    const { rows } = await db.withSubject('anyone', 'summing', (trx) =>
      sql<{ total: number; count: number }>`select sum(x)::float8 as total, count(*)::int as count from unnest(${realArray([1.5, 2.25, -1])}::real[]) as x`.execute(trx),
    );
    expect(rows[0]).toEqual({ total: 2.75, count: 3 });
  });

  it.runIf(engine === 'pglite')('refuses a real[] parameter that is not in binary form, saying so', async () => {
    const pglite = await sharedPGlite();
    const { PGLITE_QUERY_OPTIONS } = await import('../../src/db/pglite-open.js');
    await expect(pglite.query('select $1::real[]', [[1, 2]], PGLITE_QUERY_OPTIONS)).rejects.toThrow('a real[] parameter must be in binary form');
  });
});
