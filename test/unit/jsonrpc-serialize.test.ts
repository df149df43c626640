import { describe, expect, it } from 'vitest';
import { PreSerialized, serializeMessage } from '../../src/mcp/jsonrpc.js';

// Answers are cut from shared slabs: each must keep its own bytes while later answers are made, across slabs.
describe('serializeMessage', () => {
  it('keeps every answer whole while many more are made after it', () => {
    const result = { tools: Array.from({ length: 40 }, (_, i) => ({ name: `tool_${i}`, description: `Beschreibung ${i}: ✓ naïve café `.repeat(20) })) };
    const shared = new PreSerialized(result);
    const answers = Array.from({ length: 60 }, (_, i) => serializeMessage({ jsonrpc: '2.0', id: i % 2 === 0 ? i : `request-${i}`, result: shared }));
    expect(answers.reduce((total, answer) => total + answer.length, 0)).toBeGreaterThan(1024 * 1024);
    for (const [i, answer] of answers.entries()) {
      expect(JSON.parse(answer.toString('utf8'))).toEqual({ jsonrpc: '2.0', id: i % 2 === 0 ? i : `request-${i}`, result });
    }
  });

  it('encodes plain answers exactly, small, multi-byte and larger than a slab can share', () => {
    const texts = ['ok', 'Zoë’s café — 東京 🎉', 'x'.repeat(70_000) + '€', 'y'.repeat(300_000)];
    const answers = texts.map((text, id) => serializeMessage({ jsonrpc: '2.0', id, result: { text } }));
    for (const [id, answer] of answers.entries()) {
      const expected = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, result: { text: texts[id] } }), 'utf8');
      expect(answer.equals(expected)).toBe(true);
    }
  });
});
