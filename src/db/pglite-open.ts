import { mkdirSync } from 'node:fs';
import { PGlite, type QueryOptions } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { PGLITE_PARSERS } from './pglite-timestamps.js';

/** PGlite on `dataDir` (a folder, made if missing, or memory://) with pgvector and our timestamp parsers. */
export async function openPGlite(dataDir: string): Promise<PGlite> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return PGlite.create({ dataDir, extensions: { vector }, parsers: PGLITE_PARSERS });
}

/** real[] (float4[]): how a query vector travels (pgvector.ts's vectorParameter). */
const FLOAT4_ARRAY_OID = 1021;
const FLOAT4_OID = 700;

/**
 * Options for every statement PGlite runs (PGliteEngine passes them). A real[] parameter goes in PostgreSQL's
 * binary array format: PGlite's WASM parses numbers from text slowly, ~2 ms for a 512-dimension vector against
 * ~0.1 ms from binary. PGlite types a serializer as returning text, but its Bind message sends any byte array
 * in binary format (as for bytea), which this relies on; test/db/vector-parameter.test.ts checks that it does.
 */
export const PGLITE_QUERY_OPTIONS: QueryOptions = {
  serializers: {
    [FLOAT4_ARRAY_OID]: (value: unknown) => {
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'number')) throw new TypeError('a real[] parameter must be an array of numbers');
      return float4ArrayBinary(value) as unknown as string;
    },
  },
};

/** array_recv's format: dimensions, has-nulls flag, element type, then length and lower bound, then each element. */
function float4ArrayBinary(values: readonly number[]): Uint8Array {
  const view = new DataView(new ArrayBuffer(20 + values.length * 8));
  view.setInt32(0, 1);
  view.setInt32(4, 0);
  view.setInt32(8, FLOAT4_OID);
  view.setInt32(12, values.length);
  view.setInt32(16, 1);
  values.forEach((value, index) => {
    view.setInt32(20 + index * 8, 4);
    view.setFloat32(24 + index * 8, value);
  });
  return new Uint8Array(view.buffer);
}
