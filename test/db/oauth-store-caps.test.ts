import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLimits } from '../../src/auth/authorization-server/limits.js';
import { OAuthStore } from '../../src/auth/authorization-server/oauth-store.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/open-database.js';
import { countObjects } from '../../src/db/oauth/oauth-objects.js';
import { createLogger } from '../../src/logger.js';
import { TEST_DATABASE_URL, engines, uniqueSchema } from '../helpers/engines.js';
import { sharedPGlite } from '../helpers/shared.js';

/**
 * The caps on sign-ins in progress and sessions hold under concurrent writers: on PostgreSQL each save is its own
 * transaction on its own connection, and without a lock two of them each count the other's row and neither evicts.
 */
describe.each(engines)('capped authorization-server objects on %s', (engine) => {
  let db: DatabaseHandle;
  beforeAll(async () => {
    db = await openDatabase({
      url: engine === 'postgres' ? TEST_DATABASE_URL : undefined,
      dataDir: 'memory://',
      schema: uniqueSchema(),
      embeddingDimensions: 3,
      pglite: engine === 'pglite' ? await sharedPGlite() : undefined,
    });
  });
  afterAll(async () => {
    if (engine === 'postgres') await db?.withAllSubjects('dropping the test schema', (trx) => sql`drop schema ${sql.id(db.schema)} cascade`.execute(trx));
    await db?.close();
  });

  it('never keeps more interactions than the cap, however many are saved at once', async () => {
    const store = new OAuthStore(db, withLimits({ maxInteractions: 5 }), createLogger('silent'));
    for (let round = 0; round < 4; round += 1) {
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => store.upsert('generation-a', 'Interaction', `interaction-${round}-${i}`, { uid: `uid-${round}-${i}` }, 600)),
      );
    }
    const kept = await db.withAuthorizationServer('counting', (trx) => countObjects(trx, 'generation-a', 'Interaction'));
    expect(kept).toBe(5);
  });
});
