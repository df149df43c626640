import { mkdirSync } from 'node:fs';
import { PGlite, type QueryOptions } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { PGLITE_PARSERS } from './pglite-timestamps.js';

/**
 * PostgreSQL's buffer cache inside PGlite's WASM memory. initdb's 128 MB is all resident once PGlite has started
 * (302 MB against 180 MB at 32 MB, a process holding 3,000 vectors; issue 40); PGlite reads what the cache misses
 * from files the kernel caches in turn.
 */
const SHARED_BUFFERS = '32MB';

/** PGlite on `dataDir` (a folder, made if missing, or memory://) with pgvector and our timestamp parsers. */
export async function openPGlite(dataDir: string): Promise<PGlite> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return PGlite.create({
    dataDir,
    extensions: { vector },
    parsers: PGLITE_PARSERS,
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
  });
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
