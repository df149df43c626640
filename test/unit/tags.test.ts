import { describe, it, expect } from 'vitest';
import { TAG_LIMITS, normalizeTag, normalizeTags, type TagResult } from '../../src/memory/tags.js';
import { describeTagProblem } from '../../src/memory/tags.js';

/** The refusal as the tools word it (the message names the argument); undefined when the tags were accepted. */
const rejection = (result: TagResult): string | undefined => (result.ok ? undefined : describeTagProblem(result));

describe('TAG_LIMITS', () => {
  it('allows 20 tags of 64 characters', () => {
    expect(TAG_LIMITS).toEqual({ maxTags: 20, maxTagChars: 64 });
  });
});

describe('normalizeTag', () => {
  it.each<[string, string, string]>([
    // NFKC
    ['full-width letters', 'ＡＢＣ', 'abc'],
    ['fi ligature', 'ﬁle', 'file'],
    ['full-width digits and hash', '＃Ｗｏｒｋ２０２４', 'work2024'],
    ['superscript digit', 'x²', 'x2'],
    ['circled letter', 'Ⓐpp', 'app'],
    ['no-break space becomes a separator', 'new\u00a0york', 'new-york'],
    ['ideographic space becomes a separator', '東京\u3000旅行', '東京-旅行'],
    ['decomposed accent is composed', 'cafe\u0301', 'café'],
    // lowercase
    ['uppercase ASCII', 'WORK', 'work'],
    ['mixed case', 'PostgreSQL', 'postgresql'],
    ['non-ASCII uppercase', 'ÉCOLE', 'école'],
    ['Greek uppercase', 'ΑΘΗΝΑ', 'αθηνα'],
    // trim
    ['surrounding spaces', '  work  ', 'work'],
    ['surrounding tabs and newlines', '\t\nwork\n', 'work'],
    // leading #
    ['leading hash', '#Work', 'work'],
    ['hash then spaces', '#  work', 'work'],
    ['spaces then hash', '  #work', 'work'],
    ['only one leading hash dropped', '##work', '#work'],
    ['hash in the middle kept', 'c#', 'c#'],
    ['trailing hash kept', 'work#', 'work#'],
    // separators
    ['spaces and underscore', '  Project_Alpha  beta ', 'project-alpha-beta'],
    ['double underscore', 'a__b', 'a-b'],
    ['single space', 'machine learning', 'machine-learning'],
    ['run of mixed whitespace', 'a \t\n b', 'a-b'],
    ['hyphens adjacent to spaces', 'a - b', 'a-b'],
    ['hyphens adjacent to underscores', 'a-_-b', 'a-b'],
    ['hyphen then space', 'a- b', 'a-b'],
    ['single hyphen kept', 'e-mail', 'e-mail'],
    ['hyphen-only run kept', 'a--b', 'a--b'],
    ['other punctuation kept', 'node.js', 'node.js'],
    ['slash kept', 'ci/cd', 'ci/cd'],
    // leading / trailing hyphens
    ['leading and trailing hyphens', '-work-', 'work'],
    ['many leading hyphens', '---work', 'work'],
    ['trailing underscore', 'work_', 'work'],
    ['leading underscore', '_private', 'private'],
    ['hash then hyphen', '#-work', 'work'],
    // empty results
    ['empty string', '', ''],
    ['only spaces', '   ', ''],
    ['only a hash', '#', ''],
    ['hash and spaces', ' #  ', ''],
    ['only underscores', '___', ''],
    ['only hyphens', '---', ''],
    ['hash, hyphens and underscores', '# -_- ', ''],
    // other scripts and emoji are kept
    ['emoji', '🚀 Launch', '🚀-launch'],
    ['Japanese', '日本語', '日本語'],
    ['Arabic', 'عمل', 'عمل'],
  ])('%s: %j → %j', (_name, input, expected) => {
    expect(normalizeTag(input)).toBe(expected);
  });

  it.each(['ＡＢＣ', '#Work', '  Project_Alpha  beta ', 'a__b', '🚀 Launch', 'ﬁle', 'ÉCOLE', '-a - b-'])(
    'is idempotent for %j',
    (input) => {
      const once = normalizeTag(input);
      expect(normalizeTag(once)).toBe(once);
    },
  );
});

const emoji = (n: number): string => '😀'.repeat(n);

describe('normalizeTags', () => {
  it.each<[string, string[], string[]]>([
    ['empty list', [], []],
    ['single tag', ['Work'], ['work']],
    ['order is preserved', ['b', 'a', 'c'], ['b', 'a', 'c']],
    ['duplicates by case and hash', ['Work', 'work', '#work'], ['work']],
    ['duplicates keep first-occurrence order', ['beta', 'Alpha', 'BETA', 'alpha', 'gamma'], ['beta', 'alpha', 'gamma']],
    ['duplicates by separator style', ['project alpha', 'project_alpha', 'Project-Alpha'], ['project-alpha']],
    ['duplicates by NFKC', ['ＡＢＣ', 'abc'], ['abc']],
    ['exactly 20 items', Array.from({ length: 20 }, (_, i) => `t${i}`), Array.from({ length: 20 }, (_, i) => `t${i}`)],
    ['20 items that dedupe', Array.from({ length: 20 }, () => 'same'), ['same']],
    ['64 ASCII characters', ['a'.repeat(64)], ['a'.repeat(64)]],
    ['64 characters after trimming and hash', [`  #${'a'.repeat(64)}  `], ['a'.repeat(64)]],
    ['64 emoji (128 UTF-16 units)', [emoji(64)], [emoji(64)]],
    ['64 full-width letters', ['Ａ'.repeat(64)], ['a'.repeat(64)]],
  ])('%s', (_name, input, expected) => {
    expect(normalizeTags(input)).toEqual({ ok: true, tags: expected });
  });

  it.each<[string, string[], string]>([
    ['21 items', Array.from({ length: 21 }, (_, i) => `t${i}`), 'tags has 21 items; at most 20 are allowed'],
    ['25 items', Array.from({ length: 25 }, (_, i) => `t${i}`), 'tags has 25 items; at most 20 are allowed'],
    ['21 items counted before dedup', Array.from({ length: 21 }, () => 'same'), 'tags has 21 items; at most 20 are allowed'],
    ['empty string', [''], 'tags[0] is empty after normalisation'],
    ['empty at index 2', ['a', 'b', '   '], 'tags[2] is empty after normalisation'],
    ['only a hash', ['ok', '#'], 'tags[1] is empty after normalisation'],
    ['only separators', ['_-_'], 'tags[0] is empty after normalisation'],
    ['65 ASCII characters', ['a'.repeat(65)], 'tags[0] is longer than 64 characters after normalisation'],
    ['65 emoji', ['ok', emoji(65)], 'tags[1] is longer than 64 characters after normalisation'],
    ['long before NFKC expansion', ['㍻'.repeat(33)], 'tags[0] is longer than 64 characters after normalisation'],
    ['first error wins', ['a'.repeat(65), ''], 'tags[0] is longer than 64 characters after normalisation'],
  ])('rejects %s', (_name, input, message) => {
    expect(rejection(normalizeTags(input))).toBe(message);
  });

  it('measures length after normalisation, not before', () => {
    // 70 input characters, 64 after trimming the spaces and the leading hash.
    expect(normalizeTags([`  #${'b'.repeat(64)}   `])).toEqual({ ok: true, tags: ['b'.repeat(64)] });
    // 64 input characters, 65 after NFKC ("ﬁ" is one code point and becomes two).
    expect(normalizeTags([`ﬁ${'c'.repeat(63)}`])).toEqual({ ok: false, problem: 'too_long', index: 0 });
  });
});
