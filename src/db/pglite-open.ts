import { mkdirSync } from 'node:fs';
import { PGlite, type QueryOptions } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { PGLITE_PARSERS } from './pglite-timestamps.js';

/** PGlite on `dataDir` (a folder, made if missing, or memory://) with pgvector and our timestamp parsers. */
export async function openPGlite(dataDir: string): Promise<PGlite> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return PGlite.create({ dataDir, extensions: { vector }, parsers: PGLITE_PARSERS });
}

/** real[] (float4[]): how a vector travels (pgvector.ts's realArray). */
const FLOAT4_ARRAY_OID = 1021;

/**
 * Options for every statement PGlite runs (PGliteEngine passes them). A real[] parameter comes already in
 * PostgreSQL's binary array format (realArray). PGlite types a serializer as returning text, but its Bind message
 * sends any byte array in binary format (as for bytea), which this relies on; test/db/vector-parameter.test.ts
 * checks that it does.
 */
export const PGLITE_QUERY_OPTIONS: QueryOptions = {
  serializers: {
    [FLOAT4_ARRAY_OID]: (value: unknown) => {
      if (!(value instanceof Uint8Array)) throw new TypeError('a real[] parameter must be in binary form (realArray)');
      return value as unknown as string;
    },
  },
};
