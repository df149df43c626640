import { describe, expect, it } from 'vitest';
import { isEntry, meaningsOf } from '../../src/memory/wordnet.js';

describe('WordNet reader', () => {
  it('finds synonyms in a word’s most frequent senses, through its inflected forms', () => {
    expect(meaningsOf('spouse', { senses: 1, hypernymDepth: 0 }).synonyms).toContain('partner');
    expect(meaningsOf('resides', { senses: 1, hypernymDepth: 1 }).broader).toContain('live');
    expect(meaningsOf('bought', { senses: 1, hypernymDepth: 0 }).synonyms).toContain('purchase');
  });

  it('climbs to more general words only as far as asked', () => {
    expect(meaningsOf('painter', { senses: 1, hypernymDepth: 1 }).broader).toContain('artist');
    expect(meaningsOf('painter', { senses: 1, hypernymDepth: 0 }).broader.size).toBe(0);
  });

  it('leaves out rare senses', () => {
    // "nut" and "egg" share only a slang sense, well below their first two.
    expect(meaningsOf('eggs', { senses: 2, hypernymDepth: 0 }).synonyms).not.toContain('nut');
    expect(meaningsOf('eggs', { senses: 3, hypernymDepth: 0 }).synonyms).toContain('nut');
  });

  it('knows multi-word terms and nothing for numbers or unknown words', () => {
    expect(isEntry('time of year')).toBe(true);
    expect(isEntry('significant other')).toBe(true);
    expect(isEntry('zzqx')).toBe(false);
    expect(meaningsOf('1985', { senses: 3, hypernymDepth: 1 }).synonyms.size).toBe(0);
    expect(meaningsOf('zzqx', { senses: 3, hypernymDepth: 1 }).synonyms.size).toBe(0);
  });
});
