import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { looksLikeSecret } from '../../src/memory/secrets.js';
import { ORDINARY_TEXTS, SECRET_TEXTS } from '../fixtures/secrets-corpus.js';

/** The labelled corpus, measured on both sides: every secret-shaped text refused, every ordinary text stored. */
describe('secret detector on the labelled corpus', () => {
  it.each(SECRET_TEXTS.map((entry) => [entry.why, entry.text] as const))('refuses: %s', (_why, text) => {
    expect(looksLikeSecret(text)).toBe(true);
  });

  it.each(ORDINARY_TEXTS.map((entry) => [entry.why, entry.text] as const))('accepts: %s', (_why, text) => {
    expect(looksLikeSecret(text)).toBe(false);
  });

  it('is labelled consistently and large enough on both sides', () => {
    expect(SECRET_TEXTS.every((entry) => entry.secret)).toBe(true);
    expect(ORDINARY_TEXTS.every((entry) => !entry.secret)).toBe(true);
    expect(SECRET_TEXTS.length).toBeGreaterThanOrEqual(61);
    expect(ORDINARY_TEXTS.length).toBeGreaterThanOrEqual(61);
  });

  it('has its counts in docs/security.md', () => {
    const doc = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
    expect(doc).toContain(`${SECRET_TEXTS.length} secret-shaped texts and ${ORDINARY_TEXTS.length} ordinary ones`);
  });
});
