import type { NewMemory } from '../../src/db/memories/records.js';

/** A memory of `text` with every optional field left out (importance 0.5, no tags). */
export const newMemory = (text: string): NewMemory => ({
  text,
  tags: [],
  sourceProvider: undefined,
  importance: 0.5,
  captureMode: undefined,
  sessionId: undefined,
  expiresAt: undefined,
  lastConfirmedAt: undefined,
});
