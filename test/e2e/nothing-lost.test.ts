import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryService } from '../../src/memory/memory-service.js';
import { exportLines } from '../../src/transfer/export-format.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const SEED = 20_261_128;
/** Runs per engine: each remembers 2–5 texts and checks them three ways (~1–2 s a run with the local model on a busy 2-core machine). */
const RUNS = 30;

const NUMBER_WORDS = ['two', 'three', 'four', 'five', 'six', 'seven'];
const NAMES = ['Kofi', 'Ben', 'Priya', 'Callum', 'Mei', 'Rowan', 'Ines', 'Tomasz'];
const DAYS = ['Mondays', 'Tuesdays', 'Wednesdays', 'Thursdays', 'Fridays'];
const CURRENCIES = ['£', '$', '€'];
const UNITS = ['km', 'miles', 'laps'];
const VERBS = ['mentors', 'lent money to', 'manages', 'drives', 'emails', 'coaches', 'is visiting', 'is picking up'];
const FOODS = ['chicken', 'lamb', 'fish', 'tofu'];

/** One fact family: every variant states something close to the others, differing in one detail or in wording. */
type Family = (values: Values) => string;

/** The slots a family's texts are written from; an edit changes some of them. */
interface Values {
  readonly n: number;
  readonly m: number;
  readonly a: string;
  readonly b: string;
  readonly verb: string;
  readonly day1: string;
  readonly day2: string;
  readonly currency: string;
  readonly unit: string;
  readonly food1: string;
  readonly food2: string;
  readonly negated: boolean;
  readonly suffix: string;
  readonly digits: boolean;
}

const numberText = (value: number, digits: boolean) => (digits ? String(value + 2) : NUMBER_WORDS[value]!);

const FAMILIES: readonly Family[] = [
  (v) => `The user is on call one week in ${numberText(v.n, v.digits)}`,
  (v) => `The user's GitHub username is rowan-build${v.suffix}`,
  (v) => `${v.a} ${v.verb} ${v.b}, the summer intern`,
  (v) => `The user pays ${v.n + 3}% of their salary into the pension and Brightwater adds ${v.m + 3}%`,
  (v) => `The savings target is ${v.currency}${(v.n + 10) * 1000}; about ${v.currency}${(v.m + 5) * 1000} is in it`,
  (v) => `The user works from home on ${v.day1} and ${v.day2}, and at the office the rest of the week`,
  (v) => `The user is allergic to ${v.food1}, so they buy ${v.food2}-based food`,
  (v) => `The user ${v.negated ? 'does not like' : 'likes'} running ${numberText(v.m, v.digits)} ${v.unit} before work`,
  (v) => `${v.a} lent the user ${v.currency}${(v.n + 1) * 100} in ${v.day1.replace(/s$/, '')}'s poker game`,
];

const values: fc.Arbitrary<Values> = fc.record({
  n: fc.integer({ min: 0, max: NUMBER_WORDS.length - 1 }),
  m: fc.integer({ min: 0, max: NUMBER_WORDS.length - 1 }),
  a: fc.constantFrom(...NAMES),
  b: fc.constantFrom(...NAMES),
  verb: fc.constantFrom(...VERBS),
  day1: fc.constantFrom(...DAYS),
  day2: fc.constantFrom(...DAYS),
  currency: fc.constantFrom(...CURRENCIES),
  unit: fc.constantFrom(...UNITS),
  food1: fc.constantFrom(...FOODS),
  food2: fc.constantFrom(...FOODS),
  negated: fc.boolean(),
  suffix: fc.constantFrom('', 's', '2', '-dev', 'er'),
  digits: fc.boolean(),
});

/** An edit of a fact's values: a number word for digits, a name or value swapped between slots, polarity, a unit, a currency, a suffix… */
const edit: fc.Arbitrary<(v: Values) => Values> = fc.oneof(
  fc.constant((v: Values) => ({ ...v, digits: !v.digits })),
  fc.constant((v: Values) => ({ ...v, a: v.b, b: v.a })),
  fc.constant((v: Values) => ({ ...v, n: v.m, m: v.n })),
  fc.constant((v: Values) => ({ ...v, day1: v.day2, day2: v.day1 })),
  fc.constant((v: Values) => ({ ...v, food1: v.food2, food2: v.food1 })),
  fc.constant((v: Values) => ({ ...v, negated: !v.negated })),
  fc.constantFrom(...UNITS).map((unit) => (v: Values) => ({ ...v, unit })),
  fc.constantFrom(...CURRENCIES).map((currency) => (v: Values) => ({ ...v, currency })),
  fc.constantFrom('', 's', '2', '-dev').map((suffix) => (v: Values) => ({ ...v, suffix })),
  fc.integer({ min: 0, max: NUMBER_WORDS.length - 1 }).map((n) => (v: Values) => ({ ...v, n })),
  // The same text again.
  fc.constant((v: Values) => v),
);

const policy = fc.constantFrom('insert', 'ask', 'skip_if_near');

/** A run: a fact, then edits of it (each applied to the last), each text remembered under some policy. */
const scenario = fc.record({
  family: fc.integer({ min: 0, max: FAMILIES.length - 1 }),
  start: values,
  steps: fc.array(fc.record({ edit, policy }), { minLength: 1, maxLength: 4 }),
  firstPolicy: policy,
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

/**
 * A run another seed found (4242, its 95th): the exact text twice, then as digits twice ("one week in 6", the same fact),
 * then another number. Recall took "six" and "6" for two versions, the newer first, and the exact text's memories
 * then for near-copies of it: none was left among the first 3.
 */
const FOUND_BEFORE: Scenario = {
  family: 0,
  start: { n: 4, m: 3, a: 'Ines', b: 'Callum', verb: 'drives', day1: 'Tuesdays', day2: 'Tuesdays', currency: '€', unit: 'laps', food1: 'fish', food2: 'chicken', negated: true, suffix: '', digits: false },
  steps: [
    { edit: (v: Values) => v, policy: 'ask' },
    { edit: (v: Values) => ({ ...v, digits: !v.digits }), policy: 'ask' },
    { edit: (v: Values) => ({ ...v, food1: v.food2, food2: v.food1 }), policy: 'insert' },
    { edit: (v: Values) => ({ ...v, n: 1 }), policy: 'skip_if_near' },
  ],
  firstPolicy: 'ask',
};

/**
 * Nothing a client was told is stored is ever lost (issue 37): for every remember answered ok under any policy,
 * with generated facts and edits of them that a same-fact decision may well get wrong, the exact text is
 * afterwards found verbatim as a memory or a restatement through list_memories and through the export, and recall
 * with that text as the query returns its memory among the first 3. Through the real service and local model.
 */
describe.each(engines)('no remembered text is lost, on %s', { timeout: 180_000 }, (engine) => {
  let server: TestServer;
  let service: MemoryService;
  let runs = 0;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    service = new MemoryService({ db: server.service.db, embedder: server.service.embedder, nearDuplicateThreshold: server.config.memory.nearDuplicateThreshold });
  });
  afterAll(async () => {
    await server.close();
  });

  it('finds every acknowledged text verbatim in list_memories and the export, and recall ranks it in the top 3', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ family, start, steps, firstPolicy }) => {
        const subject = `nothing-lost-${engine}-${runs++}`;
        const token = await server.token(subject);
        const write = FAMILIES[family]!;
        let current = start;
        const texts: { text: string; policy: string }[] = [{ text: write(current), policy: firstPolicy }];
        for (const step of steps) {
          current = step.edit(current);
          texts.push({ text: write(current), policy: step.policy });
        }

        /** Memory id under which each acknowledged text is expected: the id remember answered with. */
        const acknowledged: { text: string; memoryId: number }[] = [];
        for (const { text, policy: dedup } of texts) {
          const { isError, structured } = await server.call(token, 'remember', { text, dedup_policy: dedup });
          expect(isError, JSON.stringify(structured)).toBe(false);
          expect(structured.ok).toBe(true);
          acknowledged.push({ text, memoryId: structured.memory_id as number });
        }

        // list_memories: one page holds them all (at most 5 memories).
        const listed = await server.call(token, 'list_memories', { limit: 100 });
        /** Text → the memories holding it, as their own text or a restatement's. */
        const holders = new Map<string, Set<number>>();
        const hold = (text: string, id: number) => holders.set(text, (holders.get(text) ?? new Set()).add(id));
        for (const memory of listed.structured.memories as { memory_id: number; text: string; restatements: { text: string }[] }[]) {
          hold(memory.text, memory.memory_id);
          for (const restatement of memory.restatements) hold(restatement.text, memory.memory_id);
        }
        // The export.
        const exportedTexts = new Set<string>();
        for await (const line of exportLines(service.exportRecords(subject))) {
          const record = JSON.parse(line) as { type?: string; text?: string; restatements?: { text: string }[] };
          if (record.type !== 'memory') continue;
          exportedTexts.add(record.text!);
          for (const restatement of record.restatements ?? []) exportedTexts.add(restatement.text);
        }

        for (const { text, memoryId } of acknowledged) {
          // Under the memory remember answered with: its own text, or one of its restatements.
          expect([...(holders.get(text) ?? [])], `list_memories lost "${text}"`).toContain(memoryId);
          expect(exportedTexts.has(text), `the export lost "${text}"`).toBe(true);
          const recalled = await server.call(token, 'recall', { query: text, limit: 3 });
          const top = (recalled.structured.memories as { memory_id: number }[]).map((memory) => memory.memory_id);
          expect(top.some((id) => holders.get(text)!.has(id)), `recall of "${text}" ranked none of its memories ${JSON.stringify([...holders.get(text)!])} in ${JSON.stringify(top)}`).toBe(true);
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true, examples: [[FOUND_BEFORE]] },
    );
  });
});
