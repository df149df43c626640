/**
 * Whether two near-identical texts state the same fact. Embedding similarity alone cannot tell
 * "the user's blood type is O negative" from "the partner's blood type is A positive", and a wrongly
 * skipped fact is lost data, so `skip_if_near` also requires explicit agreement:
 *  - the same distinguishing tokens: numbers (also spelled out), codes and words with digits, single letters;
 *  - every capitalised name of one text present in the other (sentence-initial capitals excepted);
 *  - the same polarity (negation words);
 *  - nearly the same content words (Jaccard ≥ 0.8 after stop-word removal and light stemming).
 * Anything less certain is treated as a different fact and inserted.
 */
const STOP_WORDS = new Set(
  (
    'a an the and or but of to in on at by for with from as into about over after before is are was were be been ' +
    'being am do does did has have had having it its it\'s this that these those there here their they them he she ' +
    'his her hers him i me my mine we us our you your yours user users user\'s s which who whom whose what when where ' +
    'also just very really so then than too now currently still'
  ).split(' '),
);
const NUMBER_WORDS = new Set(
  (
    'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen ' +
    'seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million ' +
    'billion first second third fourth fifth sixth seventh eighth ninth tenth once twice dozen half'
  ).split(' '),
);
const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nobody', 'nothing', 'neither', 'nor', 'without', 'cannot', 'dont', 'doesnt', 'didnt', 'isnt', 'arent', 'wasnt', 'werent', 'wont', 'cant', 'hasnt', 'havent', 'hadnt', 'shouldnt', 'wouldnt', 'couldnt', 'dislikes', 'dislike', 'hates', 'hate']);

interface Evidence {
  readonly distinguishing: ReadonlySet<string>;
  /** Capitalised words; a name must appear (in any case) in the other text too. */
  readonly names: ReadonlySet<string>;
  readonly words: ReadonlySet<string>;
  readonly negated: boolean;
  readonly content: ReadonlySet<string>;
}

export function sameFact(a: string, b: string): boolean {
  const left = evidenceOf(a);
  const right = evidenceOf(b);
  return (
    left.negated === right.negated &&
    setsEqual(left.distinguishing, right.distinguishing) &&
    isSubset(left.names, right.words) &&
    isSubset(right.names, left.words) &&
    jaccard(left.content, right.content) >= 0.8
  );
}

function evidenceOf(text: string): Evidence {
  const normalised = text.normalize('NFKC');
  const distinguishing = new Set<string>();
  const names = new Set<string>();
  const words = new Set<string>();
  const content = new Set<string>();
  let negated = false;
  // Sentences split on terminal punctuation; the first word of each may be capitalised by grammar alone.
  for (const sentence of normalised.split(/(?<=[.!?;:])\s+|\n+/)) {
    const tokens = sentence.match(/[\p{L}\p{N}][\p{L}\p{N}'’._-]*/gu) ?? [];
    tokens.forEach((raw, index) => {
      const word = raw.replace(/[’]/g, "'").replace(/[._'-]+$/, '');
      const lower = word.toLowerCase();
      const bare = lower.replace(/'/g, '');
      if (NEGATIONS.has(bare) || /n't$/.test(lower)) negated = true;
      if (/\p{N}/u.test(word) || NUMBER_WORDS.has(lower)) distinguishing.add(lower.replace(/[,]/g, ''));
      else if (word.length === 1 && /\p{L}/u.test(word) && lower !== 'a' && word !== 'I') distinguishing.add(lower);
      else if (index > 0 && /^\p{Lu}/u.test(word)) names.add(lower.replace(/'s$/, ''));
      words.add(lower.replace(/'s$/, ''));
      if (!STOP_WORDS.has(lower) && !NEGATIONS.has(bare)) content.add(stem(lower.replace(/'s$/, '')));
    });
  }
  return { distinguishing, names, words, negated, content };
}

function stem(word: string): string {
  return word.replace(/(ies|ied)$/, 'y').replace(/(ing|ed|es|s)$/, '').replace(/(.)\1$/, '$1');
}

function isSubset(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return [...a].every((item) => b.has(item));
}

function setsEqual(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((item) => b.has(item));
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const item of a) if (b.has(item)) shared += 1;
  return shared / (a.size + b.size - shared);
}
