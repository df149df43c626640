import { describe, expect, it } from 'vitest';
import { PreSerialized, serializeMessage } from '../../src/mcp/jsonrpc.js';

const toolList = () => ({ tools: Array.from({ length: 40 }, (_, i) => ({ name: `tool_${i}`, description: `Beschreibung ${i}: ✓ naïve café `.repeat(20) })) });
const idOf = (i: number) => (i % 2 === 0 ? i : `request-${i}`);

// Answers are cut from shared slabs: each must keep its own bytes while later answers are made, across slabs, until
// it is released; a slab whose answers are all released is used again.
describe('serializeMessage', () => {
  it('keeps every answer whole while many more are made after it', () => {
    const result = toolList();
    const shared = new PreSerialized(result);
    const answers = Array.from({ length: 60 }, (_, i) => serializeMessage({ jsonrpc: '2.0', id: idOf(i), result: shared }).bytes);
    expect(answers.reduce((total, answer) => total + answer.length, 0)).toBeGreaterThan(1024 * 1024);
    for (const [i, answer] of answers.entries()) {
      expect(JSON.parse(answer.toString('utf8'))).toEqual({ jsonrpc: '2.0', id: idOf(i), result });
    }
  });

  it('reuses a slab once its answers are released, and never the memory of an answer not yet released', () => {
    const result = toolList();
    const shared = new PreSerialized(result);
    const kept: { id: string | number; bytes: Buffer }[] = [];
    const slabs = new Set<ArrayBufferLike>();
    for (let i = 0; i < 400; i++) {
      const { bytes, release } = serializeMessage({ jsonrpc: '2.0', id: idOf(i), result: shared });
      slabs.add(bytes.buffer);
      // One answer in fifty is still being written when the later ones are made (it keeps its slab from reuse).
      if (i % 50 === 0) kept.push({ id: idOf(i), bytes });
      else release();
    }
    // 400 answers of ~30 kB: without reuse, more than 45 slabs of 256 kB; with it, the 8 held ones and a few more.
    expect(slabs.size).toBeLessThan(15);
    for (const { id, bytes } of kept) expect(JSON.parse(bytes.toString('utf8'))).toEqual({ jsonrpc: '2.0', id, result });
  });

  it('reuses a filled slab when its last answer is released after it filled', () => {
    const shared = new PreSerialized(toolList());
    // Answers written out slowly: a batch fills several slabs before any of them is released.
    const batch = () => Array.from({ length: 40 }, (_, i) => serializeMessage({ jsonrpc: '2.0', id: i, result: shared }));
    const first = batch();
    const firstSlabs = new Set(first.map((answer) => answer.bytes.buffer));
    for (const answer of first) answer.release();
    const again = new Set(batch().map((answer) => answer.bytes.buffer));
    expect(firstSlabs.size).toBeGreaterThan(4);
    // At most 4 filled slabs wait to be used again; the one still being filled goes on.
    expect([...again].filter((buffer) => firstSlabs.has(buffer)).length).toBeGreaterThanOrEqual(4);
  });

  it('releases an answer once, however often it is told to', () => {
    const shared = new PreSerialized({ text: 'z'.repeat(30_000) });
    const first = serializeMessage({ jsonrpc: '2.0', id: 'first', result: shared });
    const second = serializeMessage({ jsonrpc: '2.0', id: 'second', result: shared });
    // A repeated release of the first must not count as the second's: its bytes stay whole while more are made.
    first.release();
    first.release();
    first.release();
    for (let i = 0; i < 100; i++) serializeMessage({ jsonrpc: '2.0', id: i, result: shared }).release();
    expect(JSON.parse(second.bytes.toString('utf8'))).toEqual({ jsonrpc: '2.0', id: 'second', result: { text: 'z'.repeat(30_000) } });
  });

  it('encodes plain answers exactly, small, multi-byte and larger than a slab can share', () => {
    const texts = ['ok', 'Zoë’s café — 東京 🎉', 'x'.repeat(70_000) + '€', 'y'.repeat(300_000)];
    const answers = texts.map((text, id) => serializeMessage({ jsonrpc: '2.0', id, result: { text } }).bytes);
    for (const [id, answer] of answers.entries()) {
      const expected = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, result: { text: texts[id] } }), 'utf8');
      expect(answer.equals(expected)).toBe(true);
    }
  });
});
