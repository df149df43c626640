/** Small English word lists shared by recall's query analysis and remember's fact comparison. */

export const SMALL_NUMBERS = [
  'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve',
  'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen',
] as const;
export const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'] as const;
export const ORDINALS = [
  '', 'first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth', 'eleventh',
  'twelfth', 'thirteenth', 'fourteenth', 'fifteenth', 'sixteenth', 'seventeenth', 'eighteenth', 'nineteenth',
] as const;
export const TENTHS = ['', '', 'twentieth', 'thirtieth', 'fortieth', 'fiftieth', 'sixtieth', 'seventieth', 'eightieth', 'ninetieth'] as const;

/** "3" → "3rd", "11" → "11th". */
export function ordinalOf(value: number): string {
  const tens = value % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][value % 10] ?? 'th');
  return `${value}${suffix}`;
}

export const MONTH_NAMES = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'] as const;
export const WEEKDAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

/** Abbreviations ("jan", "sept", "mon") and full names, lowercased, to the full name. */
export const MONTHS = new Map<string, string>(
  MONTH_NAMES.flatMap((month) => [[month, month], [month.slice(0, 3), month], ...(month === 'september' ? [['sept', month] as const] : [])] as [string, string][]),
);
export const WEEKDAYS = new Map<string, string>([
  ...WEEKDAY_NAMES.flatMap((day) => [[day, day], [day.slice(0, 3), day]] as [string, string][]),
  ...variantPairs('tuesday:tues;wednesday:weds;thursday:thur,thurs'),
]);

/** A table written "canonical:variant,variant;…", as [variant, canonical] pairs. */
export function variantPairs(table: string): [variant: string, canonical: string][] {
  return table.split(';').flatMap((group) => {
    const [canonical, variants] = group.split(':') as [string, string];
    return variants.split(',').map((variant) => [variant, canonical] as [string, string]);
  });
}

/** Irregular past forms to their base verb ("went" → "go"): stemmers leave them apart. */
export const IRREGULAR_VERBS = new Map<string, string>(
  variantPairs(
    'bite:bit,bitten;steal:stole,stolen;begin:began,begun;go:went,gone;get:got,gotten;have:had;make:made;' +
    'take:took,taken;give:gave,given;write:wrote,written;run:ran;sell:sold;buy:bought;lose:lost;win:won;' +
    'meet:met;tell:told;say:said;see:saw,seen;come:came;become:became;find:found;think:thought;feel:felt;' +
    'keep:kept;pay:paid;send:sent;spend:spent;teach:taught;catch:caught;bring:brought;build:built;' +
    'drive:drove,driven;fly:flew,flown;grow:grew,grown;know:knew,known;break:broke,broken;choose:chose,chosen;' +
    'fall:fell,fallen;forget:forgot,forgotten;eat:ate,eaten;drink:drank,drunk;swim:swam,swum;sing:sang,sung;' +
    'speak:spoke,spoken;wear:wore,worn;ride:rode,ridden;stand:stood;sit:sat;sleep:slept;wake:woke,woken;' +
    'hold:held;lead:led;feed:fed;hear:heard;leave:left;understand:understood;shake:shook,shaken;throw:threw,thrown;' +
    'draw:drew,drawn;do:did,done;hide:hid,hidden;dig:dug;lend:lent;light:lit;rise:rose,risen;shoot:shot;' +
    'sink:sank,sunk;spin:spun;stick:stuck;strike:struck;swear:swore,sworn;tear:tore,torn;bend:bent;deal:dealt;' +
    'mean:meant;seek:sought;fight:fought;forgive:forgave,forgiven;freeze:froze,frozen;hang:hung;ring:rang,rung;beat:beaten',
  ),
);

/** [value, key] pairs grouped by key, values in their order: each key's values. */
function groupedByKey(pairs: Iterable<readonly [value: string, key: string]>): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const [value, key] of pairs) groups.set(key, [...(groups.get(key) ?? []), value]);
  return groups;
}

/**
 * The possessive determiners, "her" included: also an object pronoun ("gave her the keys"), so same-fact.ts, which
 * reads objects, leaves it out (POSSESSIVES_NOT_OBJECTS).
 */
export const POSSESSIVES = ['my', 'our', 'his', 'her', 'their', 'your'] as const;
/** Titles before a name ("Dr Ng"): the name, not the title, tells two people apart. */
export const HONORIFICS = new Set(['dr', 'mr', 'mrs', 'ms', 'miss', 'mx', 'prof', 'professor', 'sir', 'dame', 'rev', 'revd']);
export const POSSESSIVES_NOT_OBJECTS = POSSESSIVES.filter((word) => word !== 'her');

/** Base verb → its irregular past forms ("go" → ["went", "gone"]). */
export const IRREGULAR_FORMS = groupedByKey(IRREGULAR_VERBS);

/** Grammar words; "up", "down", "before", "after", "more", "less" carry meaning and are kept. */
export const STOP_WORDS = new Set(
  (
    'a an the and or but of to in on at by for with from as into about around is are was were be been being am do ' +
    'does did done has have had having it its this that these those there here their theirs they them he she his ' +
    'her hers him i me my mine we us our ours you your yours user users which who whom whose what when where ' +
    'also just very really quite so then than too now currently still even though although while because someone ' +
    'something one ones some any can could will would should shall may might must own within myself yourself ' +
    'himself herself itself ourselves yourselves themselves'
  ).split(' '),
);

/** Kinship and role words, each variant to one canonical word (a different one is a different person). */
const ROLES = new Map<string, string>(
  variantPairs(
    'mother:mother,mom,mum,mam,mommy,mummy;father:father,dad,daddy,papa;parent:parent;son:son;daughter:daughter;' +
    'child:child,children,kid,kids;baby:baby;brother:brother;sister:sister;sibling:sibling;twin:twin;' +
    'husband:husband;wife:wife;spouse:spouse;partner:partner;boyfriend:boyfriend;girlfriend:girlfriend;' +
    'fiance:fiance,fiancé,fiancee,fiancée;grandmother:grandmother,grandma,granny,gran,nan,nana;' +
    'grandfather:grandfather,grandpa,granddad,grandad;grandparent:grandparent;grandson:grandson;' +
    'granddaughter:granddaughter;grandchild:grandchild,grandchildren;aunt:aunt,auntie,aunty;uncle:uncle;' +
    'cousin:cousin;niece:niece;nephew:nephew;godson:godson;goddaughter:goddaughter;godchild:godchild;' +
    'godmother:godmother;godfather:godfather;stepmother:stepmother,stepmom,stepmum,step-mother;' +
    'stepfather:stepfather,stepdad,step-father;stepson:stepson,step-son;stepdaughter:stepdaughter,step-daughter;' +
    'stepbrother:stepbrother,step-brother;stepsister:stepsister,step-sister;half-brother:half-brother;' +
    'half-sister:half-sister;mother-in-law:mother-in-law;father-in-law:father-in-law;' +
    'brother-in-law:brother-in-law;sister-in-law:sister-in-law;son-in-law:son-in-law;' +
    'daughter-in-law:daughter-in-law;in-laws:in-laws,parents-in-law;ex:ex,ex-partner,ex-husband,ex-wife,' +
    'ex-boyfriend,ex-girlfriend;friend:friend;colleague:colleague,coworker,co-worker;boss:boss;' +
    'mentor:mentor;mentee:mentee;teammate:teammate;classmate:classmate;roommate:roommate,flatmate,housemate;neighbour:neighbour,neighbor;landlord:landlord,landlady;tenant:tenant',
  ),
);
for (const prefix of ['great-', 'great-great-']) {
  for (const [variant, canonical] of [...ROLES]) if (/^grand/.test(canonical)) ROLES.set(prefix + variant, prefix + canonical);
}
for (const [variant, canonical] of [...ROLES]) {
  if (variant.startsWith('ex-')) ROLES.set(variant, canonical === 'ex' ? `ex-${variant.slice(3)}` : canonical);
}

/**
 * The more general role each role is one of ("husband" is a spouse, "baby" a child): a text that names the general
 * one says less about the same person, not something else.
 */
export const BROADER_ROLES = groupedByKey(
  variantPairs(
    'spouse:husband,wife;partner:husband,wife,spouse,boyfriend,girlfriend,fiance;parent:mother,father;' +
      'child:son,daughter,baby;sibling:brother,sister,twin;grandparent:grandmother,grandfather;grandchild:grandson,granddaughter',
  ).map(([specific, general]) => [general, specific] as const),
);

/** Each canonical role's words, the commonest first ("father" → father, dad, daddy, papa). */
const ROLE_WORDS = groupedByKey(ROLES);
/** How many of a role's words are common enough to search for another ("father", "dad", "daddy"; not "papa"). */
const COMMON_ROLE_WORDS = 3;

/**
 * The other common words for the role `word` names ("dad" → father, daddy), or none; not a hyphenated one, which a
 * full-text search would take for its parts ("step-father": "father").
 */
export function otherRoleWords(word: string): string[] {
  const lower = word.toLowerCase();
  const role = ROLES.get(lower);
  return role === undefined ? [] : (ROLE_WORDS.get(role) ?? []).slice(0, COMMON_ROLE_WORDS).filter((variant) => variant !== lower && !variant.includes('-'));
}

/** The canonical role a word names ("mum" → mother, "sons" → son), or undefined. */
export function roleOf(word: string): string | undefined {
  const lower = word.toLowerCase();
  return ROLES.get(lower) ?? ROLES.get(lower.replace(/s$/, ''));
}
