import { IRREGULAR_FORMS, IRREGULAR_VERBS, MONTHS, ORDINALS, POSSESSIVES, SMALL_NUMBERS, STOP_WORDS, WEEKDAYS, ordinalOf, otherRoleWords, roleOf } from './english.js';

/**
 * The words the full-text ranking searches for, from the question recall is asked. PostgreSQL's English stop
 * words already drop question words, pronouns and auxiliaries; this also drops "the user" (THE_USER: so "my" and
 * "the user's" alike leave only their noun), the words that say what kind of answer is wanted ("what time", "how
 * many", "what kind of", "the name of", "for a living") and modal verbs, because a memory sharing only such a word
 * is no evidence for it ("The user would like to visit Iceland" for "What would the user like me to call them?").
 * Dates and small numbers also search their other written forms ("3rd" and "3", "two" and "2", "Sept" and
 * "September").
 *
 * The vector ranking embeds the question nearly as asked (questionToEmbed): turning a first-person question into
 * the facts' third person ("my" → "the user's") made the local model rank worse on the development set
 * (bench/README.md).
 */
const ANSWER_TYPE =
  /\b(what|which|whose|how)((?:\s+(?:is|was|are|were|'s))?(?:\s+the)?)\s+(?:kind|sort|type|name|names|time|day|date|year|month|week|age|number|amount|many|much|long|often|old|far|big|size)\b(?:\s+of(?:\s+the\s+(?:week|month|year))?)?/gi;
/** Modal verbs that are not among PostgreSQL's English stop words ("can", "will", "should" are). */
const MODALS = /\b(?:would|could|might|must|shall|ought|may(?!\s+\d))\b/g;
/**
 * The question as the vector ranking embeds it: "the user" as "they" and "the user's" as "their". Every memory is
 * about the user, and memories call them "the user", by name or "I": kept, those words draw the texts that say
 * them by wording alone ("The user's sister is Lucia" for "Who was the user's first wife?", above "Marcus was
 * married to Carla Vega"); a pronoun keeps the question's shape (whose doctor, who did what) without them
 * (bench/README.md, "The user in a question").
 */
export function questionToEmbed(question: string): string {
  return question.replace(/\bthe user['’]s\b/gi, 'their').replace(/\bthe user\b/gi, 'they');
}

/**
 * "The user" names the subject of every memory, as "I" and "my" do (stop words): searched, it finds the memories
 * that happen to say it ("The user's sister is Lucia") above those that call the user by name ("Marcus …").
 */
const THE_USER = /\bthe user(?:'s)?(?![\p{L}\p{N}])/giu;

/** The question's searchable words, with the other written forms of its verbs, dates and numbers. */
export function contentWords(query: string): string {
  const text = withoutAnswerType(query).replace(THE_USER, ' ');
  const variants: string[] = [];
  for (const token of text.match(/[\p{L}\p{N}]+/gu) ?? []) {
    const lower = token.toLowerCase();
    const ordinal = /^(\d{1,2})(?:st|nd|rd|th)$/.exec(lower);
    const number = /^\d{1,2}$/.test(lower) ? Number(lower) : undefined;
    if (ordinal !== null) variants.push(ordinal[1]!);
    if (number !== undefined && number >= 1 && number <= 31) variants.push(ordinalOf(number));
    if (number !== undefined && number < SMALL_NUMBERS.length) variants.push(SMALL_NUMBERS[number]!);
    const spelled = (SMALL_NUMBERS as readonly string[]).indexOf(lower);
    if (spelled >= 0) variants.push(String(spelled));
    const spelledOrdinal = (ORDINALS as readonly string[]).indexOf(lower);
    if (spelledOrdinal > 0) variants.push(String(spelledOrdinal), ordinalOf(spelledOrdinal));
    const month = MONTHS.get(lower);
    if (month !== undefined && month !== lower && /^\p{Lu}/u.test(token)) variants.push(month);
    // "When did she go …" finds "I went …": PostgreSQL's stemmer leaves irregular forms apart.
    if (!AUXILIARIES.has(lower)) variants.push(...(IRREGULAR_FORMS.get(lower) ?? []), ...[IRREGULAR_VERBS.get(lower) ?? []].flat());
  }
  return variants.length === 0 ? text : `${text} ${variants.join(' ')}`;
}

/**
 * Other words for the question's titles and kinship words: "Who is my doctor?" finds "registered with Dr Moreau",
 * "What did my dad do?" finds "Tomasz's father is Alan Wren". Searched only where some memory uses them
 * (RecallQuestion's `alternatives`).
 */
export function alternativeWords(query: string): string[] {
  const alternatives = new Set<string>();
  for (const token of withoutAnswerType(query).match(/[\p{L}\p{N}-]+/gu) ?? []) {
    const lower = token.toLowerCase();
    for (const word of [...(TITLES.get(lower) ?? []), ...otherRoleWords(lower)]) alternatives.add(word);
  }
  return [...alternatives];
}

/**
 * Words that say the question is about the present ("now", "these days", "currently", "any more", and "before" at
 * the end or before a name, which means before now), not what it is about: any fact holds now, so a memory sharing
 * only them is no evidence ("These days the user's main sport is climbing" for "How does the user keep fit these
 * days?"). Which version of a fact is meant is recall-time.ts's business. Words that place a question in the past
 * ("used to", "two years ago") stay: a memory of that time tends to say them (LoCoMo's "What hobby did Evan start
 * a few years ago?" is answered by a turn saying "a few years ago").
 */
const TIME_QUALIFIERS = /\b(?:right now|now|nowadays|currently|these days|at the moment|at present|presently|any ?more)\b/gi;
const BEFORE_WHAT = /\b[Bb]efore(?=\s*(?:[?.!]|$|\p{Lu}))/gu;
/**
 * "My old boss", "the user's former flatmate", "his current job": a word that says the person or thing is a past
 * one or the present one (recall-time.ts reads it), not one the memories use: searched, "old" finds "a
 * five-year-old ginger tabby" and "current" finds "Tomasz's current account".
 */
const PAST_OR_PRESENT_ONE = new RegExp(String.raw`(?<=\b(?:${POSSESSIVES.join('|')}|user's)\s+)(?:old|former|previous|current)\b`, 'giu');

/** "What does she do for a living?" asks for an occupation: "living" would search "lives in Leeds". */
const FOR_A_LIVING = /\bfor an? living\b/gi;

/**
 * The question without the words that say what kind of answer is wanted, without modal verbs and without the words
 * that say it is about the present, or about a past one ("my old boss").
 */
function withoutAnswerType(query: string): string {
  return query.replace(/[’]/g, "'").replace(ANSWER_TYPE, '$1$2').replace(MODALS, ' ').replace(TIME_QUALIFIERS, ' ').replace(BEFORE_WHAT, ' ').replace(PAST_OR_PRESENT_ONE, ' ').replace(FOR_A_LIVING, ' ');
}

/** Titles and the words they shorten, each way. */
const TITLES = new Map<string, string[]>([
  ['doctor', ['dr']],
  ['doctors', ['dr']],
  ['dr', ['doctor']],
  ['professor', ['prof']],
  ['prof', ['professor']],
]);

/** Verbs that mostly serve as auxiliaries in questions: their other forms are no evidence. */
const AUXILIARIES = new Set(['do', 'does', 'did', 'done', 'have', 'has', 'had']);

/** Words that may stand between a role word and the name it introduces ("son Theo", "partner is Sam", "mother, Brigid"). */
const BEFORE_NAME = new Set(['is', 'was', 'called', 'named', ',', '(', ':', '-', '–']);

/**
 * The names that `texts` write right after a kinship or role word the question asks about, and the question does
 * not name itself: asked "Who teaches the user's son?", a first result "The user's son Theo is 9" gives "Theo",
 * through which the facts about the son are found ("Theo's teacher is Mr Bell") although they never say "son".
 * Empty when the question has no role word.
 */
export function bridgeNames(question: string, texts: readonly string[]): string[] {
  const asked = askedWords(question);
  const roles = askedRoles(asked);
  if (roles.size === 0) return [];
  const names = new Set<string>();
  for (const text of texts) {
    const words = bridgeTokens(text);
    words.forEach((word, index) => {
      const role = roleOf(word.replace(/'s$/, ''));
      if (role === undefined || !roles.has(role) || word.endsWith("'s")) return;
      let next = index + 1;
      while (next < words.length && next <= index + 2 && BEFORE_NAME.has(words[next]!.toLowerCase())) next++;
      // Up to two capitalised words ("Mr Bell"); a possessive ends the name ("son Theo's school").
      for (let taken = 0; taken < 2 && next < words.length; taken++, next++) {
        const name = words[next]!.replace(/'s$/, '');
        if (!isNewName(name, asked)) break;
        names.add(name);
        if (words[next]!.endsWith("'s")) break;
      }
    });
    for (const name of subjectNames(text, roles, asked)) names.add(name);
  }
  return [...names];
}

/**
 * A later clause that refers back to someone by a singular pronoun ("Who is Leon's sister, and who is she married
 * to?", "Who mentors the user, and how long has she been at the company?"): the person is whoever the first
 * clause finds. "They" is left out: in questions about the user it is most often the user.
 */
const REFERRING_CLAUSE = /,?\s+and\s+(?:who|whom|whose|what|where|when|which|how|why|does|do|did|is|are|was|were|has|have|can)\b(.*)$/i;
const SINGULAR_PRONOUN = /\b(?:she|he|her|hers|his|him)\b/i;

/** The later clause of the question that refers back to someone by a pronoun (REFERRING_CLAUSE), if it has one. */
export function referringClause(question: string): string | undefined {
  const clause = REFERRING_CLAUSE.exec(question.replace(/[’]/g, "'"));
  return clause !== null && SINGULAR_PRONOUN.test(clause[1]!) ? clause[0] : undefined;
}

/**
 * Whom a later clause of the question refers back to by a pronoun: the people the first clause names, when it asks
 * no role of them (namedInFirstClause); else the names the best of `texts` gives that the question does not, the
 * person the first clause found ("Leon's sister Beatriz is a nurse" gives "Beatriz"), through whom the second
 * clause's fact is found ("Beatriz's husband Rui teaches maths"). Empty when no clause refers back.
 */
export function referredNames(question: string, texts: readonly string[]): string[] {
  const clause = referringClause(question);
  if (clause === undefined) return [];
  const named = namedInFirstClause(question.slice(0, question.length - clause.length));
  if (named.length > 0) return named;
  const asked = askedWords(question);
  for (const text of texts) {
    const names = new Set<string>();
    for (const word of bridgeTokens(text)) {
      const name = word.replace(/'s$/, '');
      if (isNewName(name, asked)) names.add(name);
    }
    if (names.size > 0) return [...names];
  }
  return [];
}

/**
 * The people a question's first clause names when it asks no role of them ("What day is Elsa's swimming lesson,
 * and what is she allergic to?"): the pronoun of the later clause is one of them, not someone a result names
 * ("Who is Leon's sister, and who is she married to?" asks for a role: the results say who she is).
 */
function namedInFirstClause(first: string): string[] {
  if (askedRoles(askedWords(first)).size > 0) return [];
  const names = bridgeTokens(first)
    .slice(1)
    .map((token) => token.replace(/'s$/, ''))
    .filter((word) => isName(word) && !isDateWord(word.toLowerCase()));
  return [...new Set(names)];
}

/**
 * The names a sentence gives its subject when it says the subject is the role asked about: at the end ("Val's
 * daughter Lottie is the user's favourite cousin."), or someone's role with more said after it ("Rafael is
 * Marcus's cousin on his mother's side."): Val and Lottie, Rafael, through whom the facts about them are found.
 */
function subjectNames(text: string, roles: ReadonlySet<string>, asked: ReadonlySet<string>): string[] {
  const names: string[] = [];
  for (const sentence of text.replace(/[’]/g, "'").split(/(?<=[.!?;])\s+/)) {
    const said = /^(.+?)\s+(?:is|are|was|were)\s+(.+)$/u.exec(sentence.trim());
    if (said === null || !saysRole(said[2]!, roles)) continue;
    for (const word of bridgeTokens(said[1]!)) {
      const name = word.replace(/'s$/, '');
      if (isNewName(name, asked)) names.push(name);
    }
  }
  return names;
}

/**
 * Whether a predicate names one of `roles`: as its last word, or within two words after an owner ("Marcus's older
 * cousin", "my brother").
 */
function saysRole(predicate: string, roles: ReadonlySet<string>): boolean {
  const isRole = (word: string) => roles.has(roleOf(word) ?? '');
  if (isRole(predicateWords(predicate).at(-1) ?? '')) return true;
  // The predicate's own noun: after its first owner and any owners chained to it, before a comma or "and".
  const clause = predicateWords(predicate.split(/,|\band\b/u)[0]!);
  let at = clause.findIndex(isOwner);
  if (at < 0) return false;
  while (at < clause.length && isOwner(clause[at]!)) at++;
  return clause.slice(at, at + 2).some(isRole);
}

const predicateWords = (text: string): string[] => text.match(/[\p{L}-]+(?:'s)?/gu) ?? [];
const isOwner = (word: string): boolean => word.endsWith("'s") || OWNERS.has(word.toLowerCase());
const OWNERS = new Set<string>(POSSESSIVES);

/** Whether the question names a kinship or role word (bridgeNames has something to look for). */
export function asksAboutRole(question: string): boolean {
  return askedRoles(askedWords(question)).size > 0;
}

/** A capitalised word that is neither "I" nor a grammar word. */
function isName(word: string): boolean {
  return /^\p{Lu}/u.test(word) && word !== 'I' && !STOP_WORDS.has(word.toLowerCase());
}

/** A name (isName) that is not among the question's own words. */
function isNewName(word: string, asked: ReadonlySet<string>): boolean {
  return isName(word) && !asked.has(word.toLowerCase());
}

/** Whether a lowercase word is a month's or a weekday's name ("mondays" too). */
const isDateWord = (lower: string): boolean => MONTHS.has(lower) || WEEKDAYS.has(lower.replace(/s$/, ''));

function bridgeTokens(text: string): string[] {
  return text.replace(/[’]/g, "'").match(/[\p{L}\p{N}][\p{L}\p{N}'-]*|[,(:–-]/gu) ?? [];
}

function askedWords(question: string): Set<string> {
  return new Set(bridgeTokens(question).map((token) => token.toLowerCase().replace(/'s$/, '')));
}

/** The kinds of a general kinship word: asked about "the children", a fact says "son" or "daughter". */
const ROLE_KINDS = new Map<string, readonly string[]>([
  ['child', ['son', 'daughter']],
  ['parent', ['mother', 'father']],
  ['sibling', ['brother', 'sister']],
  ['grandparent', ['grandmother', 'grandfather']],
  ['grandchild', ['grandson', 'granddaughter']],
  ['spouse', ['husband', 'wife', 'partner']],
]);

/** The roles a question asks about, each with its kinds. */
function askedRoles(asked: ReadonlySet<string>): Set<string> {
  return new Set([...asked].flatMap((token) => roleOf(token) ?? []).flatMap((role) => [role, ...(ROLE_KINDS.get(role) ?? [])]));
}

/**
 * Other words for the person a question asks about, as facts name them: "my spouse" is "partner" in the fact, "my
 * mum" is "mother", "closest mate" is "best friend", "which relative" is a brother or an aunt. Each entry: the
 * people asked about, by their canonical role (roleOf: "mum" and "mom" are "mother") or, for words that name no
 * kinship or role, in the singular; then the words searched. Kinds stay apart ("son" searches "child", never
 * "daughter").
 */
const PERSON_WORDS: readonly (readonly [asked: string, searched: string])[] = [
  ['partner spouse husband wife fiance boyfriend girlfriend', 'partner spouse husband wife'],
  ['friend mate pal buddy bestie', 'friend mate pal buddy bestie'],
  ['son', 'son child kid'],
  ['daughter', 'daughter child kid'],
  ['child', 'child kid son daughter'],
  ['mother', 'mother mum mom parent'],
  ['father', 'father dad parent'],
  ['parent folk', 'parent mother father mum dad'],
  ['brother', 'brother sibling'],
  ['sister', 'sister sibling'],
  ['sibling', 'sibling brother sister'],
  ['grandmother', 'grandmother grandma granny gran nan'],
  ['grandfather', 'grandfather grandpa granddad grandad'],
  // A relative two steps away is named by the steps too: a niece is a sibling's daughter ("Jamie has two daughters",
  // Jamie being the user's brother), an aunt a parent's sister, a grandson a child's son.
  ['niece', 'niece brother sister sibling daughter'],
  ['nephew', 'nephew brother sister sibling son'],
  ['aunt', 'aunt auntie mother mum father dad parent sister'],
  ['uncle', 'uncle mother mum father dad parent brother'],
  ['cousin', 'cousin aunt uncle'],
  ['grandson', 'grandson son daughter child'],
  ['granddaughter', 'granddaughter son daughter child'],
  ['grandchild', 'grandchild grandson granddaughter son daughter child'],
  // A relative by marriage is a partner's relative, or a relative's partner; a step-parent, a parent's partner.
  ['mother-in-law', 'mother-in-law in-laws mother mum parent partner spouse husband wife'],
  ['father-in-law', 'father-in-law in-laws father dad parent partner spouse husband wife'],
  ['in-laws', 'in-laws parents-in-law parent mother father mum dad partner spouse husband wife'],
  ['brother-in-law', 'brother-in-law in-laws brother sister sibling partner spouse husband wife'],
  ['sister-in-law', 'sister-in-law in-laws sister brother sibling partner spouse husband wife'],
  ['son-in-law', 'son-in-law son daughter child partner husband'],
  ['daughter-in-law', 'daughter-in-law son daughter child partner wife'],
  ['stepfather', 'stepfather stepdad mother mum partner husband'],
  ['stepmother', 'stepmother stepmum stepmom father dad partner wife'],
  ['relative kin kinsman kinswoman',
    'relative family mother father mum dad parent brother sister sibling son daughter child kid grandmother grandfather grandma grandpa aunt uncle cousin niece nephew in-laws partner spouse husband wife'],
  // Whom someone reports to is their manager: "Marcus reports to Derek Ames".
  ['boss manager supervisor', 'boss manager supervisor reports'],
  ['colleague teammate', 'colleague coworker teammate'],
];
const SEARCHED_FOR = new Map<string, string[]>(
  PERSON_WORDS.flatMap(([asked, searched]) => asked.split(' ').map((person) => [person, searched.split(' ')] as [string, string[]])),
);
/** The entry of SEARCHED_FOR a question's word names ("mums" → mother, "buddies" → buddy), if any. */
function personAsked(word: string): string[] | undefined {
  return SEARCHED_FOR.get(roleOf(word) ?? word.replace(/ies$/, 'y').replace(/s$/, ''));
}
/** Phrases for a partner, or for any relative, that no single word says ("family" alone is a "family doctor"). */
const PARTNER_PHRASES = /\b(?:significant other|other half|better half)\b/i;
const RELATIVE_PHRASES = /\b(?:family members?|members? of (?:the|their|my|your|his|her) family)\b/i;

/**
 * The people a question asks about: `asked`, its own words for them ("spouse"), and `searched`, the other words
 * facts may use instead ("partner", "husband", "wife"); both empty for none. A phrase ("significant other") has no
 * word of its own to look for, so `asked` is empty and `searched` is not.
 */
export function personWords(question: string): { asked: string[]; searched: string[] } {
  const words = askedWords(question);
  const asked: string[] = [];
  const searched = new Set<string>();
  for (const word of words) {
    const others = personAsked(word);
    if (others === undefined) continue;
    asked.push(word);
    for (const other of others) searched.add(other);
  }
  if (PARTNER_PHRASES.test(question)) for (const other of SEARCHED_FOR.get('partner')!) searched.add(other);
  if (RELATIVE_PHRASES.test(question)) for (const other of SEARCHED_FOR.get('relative')!) searched.add(other);
  // A word the question uses, plural or not, is searched by its own full-text ranking already.
  return { asked, searched: [...searched].filter((word) => !words.has(word) && !words.has(`${word}s`)) };
}

/**
 * The question's words that may be bridged by meaning: lowercase content words of three letters or more that are
 * neither stop words, numbers, dates nor people (personWords and bridgeNames handle those).
 */
export function meaningCandidates(question: string): string[] {
  // Written in lowercase: a capitalised word is a name ("Sam", "Valorant") or starts the question.
  const words = bridgeTokens(withoutAnswerType(question)).map((token) => token.replace(/'s$/, ''));
  return [
    ...new Set(
      words.filter(
        (word) =>
          isPlainWord(word) &&
          !QUESTION_WORDS.has(word) &&
          !isDateWord(word) &&
          roleOf(word) === undefined &&
          personAsked(word) === undefined,
      ),
    ),
  ];
}

const QUESTION_WORDS = new Set(['what', 'which', 'who', 'whom', 'whose', 'when', 'where', 'why', 'how']);

/** A text's words, in lowercase, that meaning bridges compare (isPlainWord). */
export function textWords(text: string): Set<string> {
  return new Set(bridgeTokens(text).map((token) => token.toLowerCase().replace(/'s$/, '')).filter(isPlainWord));
}

/** A word of three lowercase letters or more that is not a stop word. */
const isPlainWord = (word: string): boolean => word.length >= 3 && /^\p{Ll}+$/u.test(word) && !STOP_WORDS.has(word);
