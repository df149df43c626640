import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { normaliseCalls, runWireScenario } from '../helpers/wire-scenario.js';

/**
 * The tools' wire answers, byte for byte: every success shape and every error code of the six tools, as a
 * `tools/call` over HTTP returns them (content text and structuredContent), against a golden file recorded
 * from the service. Volatile values are placeholders (see normaliseCalls). Re-record only for an intended
 * change of the wire: UPDATE_GOLDEN=1 npx vitest run test/http/wire-golden.test.ts (PGlite; then check that
 * PostgreSQL answers the same).
 */
const GOLDEN = new URL('./wire-golden.json', import.meta.url);

describe.each(engines)('the tools answer on the wire exactly as recorded, on %s', (engine) => {
  it('matches the golden file', async () => {
    const recorded = normaliseCalls(await runWireScenario(engine));
    const text = `${JSON.stringify(recorded, null, 2)}\n`;
    if (process.env.UPDATE_GOLDEN === '1' && engine === 'pglite') writeFileSync(GOLDEN, text);
    const golden = readFileSync(GOLDEN, 'utf8');
    expect(recorded).toEqual(JSON.parse(golden));
    // Key order too: the text content is what clients and models read.
    expect(text).toBe(golden);
    // About 140 calls over HTTP: a loaded 2-core machine takes more than the default minute.
  }, 300_000);
});
