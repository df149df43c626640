// Regenerates db/schema.sql from a freshly migrated in-memory PGlite: `npm run schema:dump`.
import { writeFileSync } from 'node:fs';
import { Kysely } from 'kysely';
import { PGliteDialect } from '../src/db/pglite-dialect.js';
import { describeSchema } from '../src/db/describe-schema.js';
import { openDatabase } from '../src/db/open-database.js';
import { openPGlite } from '../src/db/pglite-open.js';

const pglite = await openPGlite('memory://');
const handle = await openDatabase({ dataDir: 'memory://', schema: 'public', embeddingDimensions: 512, pglite });
await handle.close();
const dump = await describeSchema(new Kysely<unknown>({ dialect: new PGliteDialect(pglite) }), 'public');
writeFileSync(new URL('../db/schema.sql', import.meta.url), dump);
await pglite.close();
console.log('wrote db/schema.sql');
