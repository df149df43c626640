// Checks, on the seeded 100k subject (PostgreSQL), that recall's one-statement path (the index walk with the
// full-text ranking in the same statement, walkIndexWith) returns exactly what the two statements returned:
// the same vector ids and the same full-text hits (ids, scores and coverages to the last bit), for questions
// with rare words only and with common ones.
// Run: npx tsx bench/recall-statement-check.ts [questions=120] [memories=100000]   (BENCH_SEED_SCHEMA names the seed schema)
import { isDeepStrictEqual } from 'node:util';
import { openDatabase } from '../src/db/open-database.js';
import { NO_FILTERS } from '../src/db/memories/filters.js';
import { TEXT_RANKING_ORDER, textRanking, textRankingQuery, toTextHit } from '../src/db/memories/text-ranking.js';
import { sizeForVectorRanking, vectorRanking, walkAtOnce, walkIndexWith } from '../src/db/memories/vector-ranking.js';
import { storedVector } from '../src/db/pgvector.js';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME } from '../src/embeddings/local-provider.js';
import { DEFAULT_EXACT_SCAN_LIMIT } from '../src/db/memories/recall-plan.js';
import { contentWords } from '../src/memory/query-analysis.js';
import { benchConfig } from './lib/bench-config.js';
import { BENCH_DATABASE_URL } from './lib/bench-server.js';
import { HEAVY_SUBJECT, seededDatabase } from './lib/seed.js';
import { queryText, syntheticVector } from './lib/synthetic-embedder.js';

const questions = Number(process.argv[2] ?? 120);
const memories = Number(process.argv[3] ?? 100_000);
if (BENCH_DATABASE_URL === undefined) throw new Error('set TEST_DATABASE_URL (PostgreSQL only)');
const DEPTH = 100;

const seeded = await seededDatabase('postgres', memories);
const config = benchConfig(seeded.env.MEMORY_SERVICE_DATA_DIR!, seeded.env);
const db = await openDatabase({ url: BENCH_DATABASE_URL, dataDir: config.database.dataDir, schema: config.database.schema, embeddingDimensions: LOCAL_MODEL_DIMENSIONS, poolSize: 1 });
let same = 0;
let nonEmpty = 0;
const texts = Array.from({ length: questions }, (_, i) => (i % 3 === 0 ? queryText(i) : i % 3 === 1 ? `${queryText(i)} when in Lisbon` : `what does ${queryText(i).split(' ')[1]} prefer`));
try {
  for (const text of texts) {
    const vector = storedVector(syntheticVector(text), LOCAL_MODEL_NAME);
    const words = contentWords(text);
    const separate = await db.withSubject(HEAVY_SUBJECT, 'checking', async (trx) => {
      const size = await sizeForVectorRanking(trx, HEAVY_SUBJECT, NO_FILTERS, DEFAULT_EXACT_SCAN_LIMIT, 2 * DEPTH);
      const ranked = await vectorRanking(trx, HEAVY_SUBJECT, NO_FILTERS, vector, DEPTH, { exactScanLimit: DEFAULT_EXACT_SCAN_LIMIT, size, efSearch: 2 * DEPTH });
      return { ids: ranked.ids, plan: ranked.plan, hits: await textRanking(trx, HEAVY_SUBJECT, NO_FILTERS, words, DEPTH, size.memories) };
    }, { readOnly: true });
    const together = await db.withSubject(HEAVY_SUBJECT, 'checking', async (trx) => {
      const size = await sizeForVectorRanking(trx, HEAVY_SUBJECT, NO_FILTERS, DEFAULT_EXACT_SCAN_LIMIT, 2 * DEPTH);
      const restore = walkAtOnce(size, vector, DEFAULT_EXACT_SCAN_LIMIT);
      if (restore === undefined) throw new Error('the seeded subject should walk the index at once');
      const both = await walkIndexWith(trx, HEAVY_SUBJECT, vector, DEPTH, restore, size.inConversations, [{ query: textRankingQuery(HEAVY_SUBJECT, NO_FILTERS, words, DEPTH, size.memories), order: TEXT_RANKING_ORDER }] as const);
      return { ids: both.ids, plan: both.plan, hits: both.alongside[0].map(toTextHit) };
    }, { readOnly: true });
    if (isDeepStrictEqual(separate, together)) same += 1;
    else console.log(`differs: ${text}`);
    if (separate.hits.length > 0) nonEmpty += 1;
  }
} finally {
  await db.close();
}
console.log(`${same} of ${texts.length} questions identical (vector ids, plan, full-text ids, scores, coverages); ${nonEmpty} with full-text hits`);
