import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLimits } from '../../src/auth/authorization-server/limits.js';
import { OAuthStore } from '../../src/auth/authorization-server/oauth-store.js';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { countObjects } from '../../src/db/oauth/oauth-objects.js';
import { createLogger } from '../../src/logger.js';
import { engines } from '../helpers/engines.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/**
 * The caps on sign-ins in progress and sessions hold under concurrent writers: on PostgreSQL each save is its own
 * transaction on its own connection, and without a lock two of them each count the other's row and neither evicts.
 */
describe.each(engines)('capped authorization-server objects on %s', (engine) => {
  let db: DatabaseHandle;
  beforeAll(async () => {
    db = await openTestDatabase(engine);
  });
  afterAll(() => closeTestDatabase(db));

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
