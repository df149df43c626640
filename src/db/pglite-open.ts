import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { PGLITE_PARSERS } from './pglite-timestamps.js';

/** PGlite on `dataDir` (a folder, made if missing, or memory://) with pgvector and our timestamp parsers. */
export async function openPGlite(dataDir: string): Promise<PGlite> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return PGlite.create({ dataDir, extensions: { vector }, parsers: PGLITE_PARSERS });
}
