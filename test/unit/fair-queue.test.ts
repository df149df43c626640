import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/embeddings/fair-queue.js';

interface Job {
  readonly key: string;
  readonly texts: readonly string[];
  readonly name: string;
}
const job = (key: string, name: string, chars = 10): Job => ({ key, name, texts: ['x'.repeat(chars)] });
const names = (jobs: readonly Job[]) => jobs.map((j) => j.name);

describe('FairQueue', () => {
  it('takes one job per key per round, keys in turn, up to the text limit', () => {
    const queue = new FairQueue<Job>({ maxTexts: 4, maxChars: 1_000 });
    for (const name of ['a1', 'a2', 'a3', 'a4', 'a5']) queue.push(job('a', name));
    queue.push(job('b', 'b1'));
    queue.push(job('c', 'c1'));
    expect(names(queue.take(new Set()))).toEqual(['a1', 'b1', 'c1', 'a2']);
    expect(names(queue.take(new Set()))).toEqual(['a3', 'a4', 'a5']);
    expect(queue.size).toBe(0);
  });

  it('skips keys that are running, so one key never holds two workers', () => {
    const queue = new FairQueue<Job>({ maxTexts: 32, maxChars: 1_000 });
    queue.push(job('a', 'a1'));
    queue.push(job('a', 'a2'));
    queue.push(job('b', 'b1'));
    expect(names(queue.take(new Set(['a'])))).toEqual(['b1']);
    expect(names(queue.take(new Set(['a'])))).toEqual([]);
    expect(names(queue.take(new Set()))).toEqual(['a1', 'a2']);
  });

  it('sends a text longer than the character budget alone, and keeps short ones of others out of its batch', () => {
    const queue = new FairQueue<Job>({ maxTexts: 32, maxChars: 2_000 });
    queue.push(job('a', 'a-long', 16_000));
    queue.push(job('b', 'b1'));
    queue.push(job('c', 'c1'));
    expect(names(queue.take(new Set()))).toEqual(['a-long']);
    expect(names(queue.take(new Set(['a'])))).toEqual(['b1', 'c1']);
  });

  it('serves a key that was passed over first in the next round', () => {
    const queue = new FairQueue<Job>({ maxTexts: 1, maxChars: 1_000 });
    queue.push(job('a', 'a1'));
    queue.push(job('a', 'a2'));
    queue.push(job('b', 'b1'));
    expect(names(queue.take(new Set()))).toEqual(['a1']);
    expect(names(queue.take(new Set()))).toEqual(['b1']);
    expect(names(queue.take(new Set()))).toEqual(['a2']);
  });

  it('gives a worker kept for short texts no large job: a key whose next job is large waits for one that takes it', () => {
    const queue = new FairQueue<Job>({ maxTexts: 4, maxChars: 2_000 });
    queue.push(job('a', 'a-long', 16_000));
    queue.push(job('a', 'a-short'));
    queue.push({ key: 'b', name: 'b-many', texts: Array.from({ length: 5 }, () => 'x') });
    queue.push(job('c', 'c1'));
    expect(names(queue.take(new Set(), { large: false }))).toEqual(['c1']);
    expect(names(queue.take(new Set(), { large: false }))).toEqual([]);
    expect(queue.size).toBe(3);
    // A key's jobs keep their order: a-short is not taken past a-long.
    expect(names(queue.take(new Set(), { large: true }))).toEqual(['a-long']);
    expect(names(queue.take(new Set(['a']), { large: true }))).toEqual(['b-many']);
    expect(names(queue.take(new Set(), { large: false }))).toEqual(['a-short']);
  });
});
