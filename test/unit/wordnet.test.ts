import { describe, expect, it, vi } from 'vitest';
import { isEntry, meaningsOf } from '../../src/memory/wordnet.js';

/** Whether `a` (in its `aSenses` most frequent senses, or their hypernyms) and `b` (in its `bSenses`) share a synset. */
function share(a: string, aSenses: number, b: string, bSenses: number, broader = false): boolean {
  const left = meaningsOf(a, { senses: aSenses, hypernymDepth: broader ? 1 : 0 });
  const right = meaningsOf(b, { senses: bSenses, hypernymDepth: 0 }).senses;
  return [...(broader ? left.broader : left.senses)].some((synset) => right.has(synset));
}

const sensesOfVerb = (word: string) => new Set([...meaningsOf(word, { senses: 9, hypernymDepth: 0 }).senses].filter((synset) => synset.startsWith('verb:')));

describe('WordNet reader', () => {
  it('finds shared senses in words’ most frequent senses, through their inflected forms', () => {
    expect(share('spouse', 1, 'partner', 1)).toBe(true);
    expect(share('bought', 1, 'purchase', 1)).toBe(true);
    expect(share('resides', 1, 'live', 1, true)).toBe(true);
  });

  it('climbs to more general senses only as far as asked', () => {
    expect(share('painter', 1, 'artist', 1, true)).toBe(true);
    expect(share('painter', 1, 'artist', 2)).toBe(false);
    expect(meaningsOf('painter', { senses: 1, hypernymDepth: 0 }).broader.size).toBe(0);
  });

  it('compares senses, not the words in them, and leaves out rare senses', () => {
    // "teach" has a sense worded "learn" (to instruct), far down learn's list: a learner is not a teacher.
    expect(share('learning', 2, 'teaching', 2)).toBe(false);
    expect(share('teaching', 1, 'learn', 9)).toBe(true);
    // "nut" and "egg" share only a slang sense, well below their first few.
    expect(share('eggs', 3, 'nut', 3)).toBe(false);
    expect(share('eggs', 3, 'nut', 9)).toBe(true);
  });

  it('finds the same meaning as another part of speech through the forms WordNet derives, by word', () => {
    const derivedFrom = (word: string) => meaningsOf(word, { senses: 2, hypernymDepth: 0 }).derived;
    const sensesOf = (word: string) => meaningsOf(word, { senses: 2, hypernymDepth: 0 }).senses;
    const related = (a: string, b: string) => [...derivedFrom(a)].some((synset) => sensesOf(b).has(synset));
    expect(related('wedding', 'marry')).toBe(true);
    expect(related('teacher', 'teach')).toBe(true);
    expect(related('teach', 'teacher')).toBe(true);
    // The pointers are per word: "marriage ceremony" shares a synset with "wedding" and derives from nothing.
    expect(related('marriage ceremony', 'marry')).toBe(false);
    expect(related('wedding', 'learn')).toBe(false);
    expect(related('spouse', 'marry')).toBe(false);
  });

  it('reads a verb ending in "-ied" as its "-y" form', () => {
    expect(sensesOfVerb('married')).toEqual(sensesOfVerb('marry'));
    expect(sensesOfVerb('studied')).toEqual(sensesOfVerb('study'));
    expect(sensesOfVerb('marry').size).toBeGreaterThan(0);
  });

  it('knows multi-word terms and nothing for numbers or unknown words', () => {
    expect(isEntry('time of year')).toBe(true);
    expect(isEntry('significant other')).toBe(true);
    expect(isEntry('zzqx')).toBe(false);
    expect(meaningsOf('1985', { senses: 3, hypernymDepth: 1 }).senses.size).toBe(0);
    expect(meaningsOf('zzqx', { senses: 3, hypernymDepth: 1 }).senses.size).toBe(0);
  });

  it('reads its index files at start-up without blocking the event loop', async () => {
    // A module instance of its own, so that no earlier look-up in this file has read the indexes already.
    vi.resetModules();
    const fresh = await import('../../src/memory/wordnet.js');
    let turns = 0;
    let loaded = false;
    const count = (): void => {
      turns += 1;
      if (!loaded) setImmediate(count);
    };
    setImmediate(count);
    await fresh.loadDictionary().then(() => (loaded = true));
    // A synchronous read would finish before the event loop turned once.
    expect(turns).toBeGreaterThan(0);
    expect(fresh.isEntry('significant other')).toBe(true);
  });
});
