import { eraseSharedSpace, eraseSubject } from '../db/erase-subject.js';
import { briefCandidates, recordRecalls } from '../db/memories/brief.js';
import { confirmMemory, deleteMemory, insertMemory, insertMemoryNearTombstones } from '../db/memories/memories.js';
import { listPage } from '../db/memories/list-page.js';
import { continueMemoryTerms, pendingTermMemories } from '../db/memories/memory-terms.js';
import { findNearMemories } from '../db/memories/near-memories.js';
import type { NearMemory } from '../db/memories/records.js';
import { contentWords, questionToEmbed } from './query-analysis.js';
import { readMemory, tagCounts } from '../db/memories/read-memories.js';
import { subjectMemoryCount, subjectUsage, type SubjectUsage } from '../db/memories/subject-stats.js';
import { countTombstones, eraseTombstones, insertTombstone, tombstonePage } from '../db/memories/tombstones.js';
import { exportMemoryPage } from '../db/memories/transfer.js';
import { deleteRestatement, insertRestatement, readRestatement, restatementsOf } from '../db/memories/restatements.js';
import { lockSubjectForWrite } from '../db/memories/write-lock.js';
import { ownedSpaceKeys, removeMemberships, spaceOfRow } from '../db/spaces.js';
import type { DatabaseHandle } from '../db/open-database.js';
import type { DbTransaction } from '../db/schema.js';
import { storedVector, type MemoryVectors, type StoredVector } from '../db/pgvector.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';
import { embeddingError, forbidden, notFound } from '../errors.js';
import { authorIn, holdForWrite, resolveSpace, resolveSpaces, toAccessible, toPrincipal, writable, type AccessibleSpace, type Caller, type Need, type SpaceRef } from '../spaces/spaces.js';
import { BRIEF_CANDIDATES_PER_LIST, BRIEF_TEXT_CHARS, composeBrief, type Brief } from './brief.js';
import { codePointLength, fitTexts, fitToBudget, toMemory } from './budget.js';
import { importItems, type ImportOptions } from './import.js';
import { embedMemoryTexts } from './passages.js';
import { checkQuota, NO_QUOTA, type SubjectQuota } from './quota.js';
import { DEFAULT_EXACT_SCAN_LIMIT } from '../db/memories/recall-plan.js';
import { rankMemories } from './recall-ranking.js';
import { comparerOf, type FactComparison } from './same-fact.js';
import { NAME_TEXT_CHARS, NAME_TEXTS, namingUser, SelfNames } from './self-names.js';
import { RecallCounts } from './recall-counts.js';
import { rejectSecrets } from './secrets.js';
import { canonicalTags } from './tags.js';
import type {
  ConfirmResult,
  CorrectResult,
  Correction,
  DedupPolicy,
  ErasedRows,
  ExportRecord,
  ForgetResult,
  ImportItem,
  ImportSummary,
  ListPosition,
  ListRequest,
  ListResult,
  Memory,
  NewMemory,
  RecallRequest,
  RecallResult,
  RememberResult,
  TagCount,
  TombstonePage,
  TombstonePosition,
} from './types.js';

export interface MemoryServiceOptions {
  readonly db: DatabaseHandle;
  readonly embedder: EmbeddingProvider;
  readonly nearDuplicateThreshold: number;
  /** Candidate sets up to this size are ranked by exact vector search (see vectorRanking and findNearMemories). */
  readonly exactScanLimit?: number;
  /** What one subject may keep (remember, correct and import stop at it); default none. */
  readonly quota?: SubjectQuota;
  /** Told when writing a stored memory's words failed; they are written by a retry (see completePendingTerms). */
  readonly onTermsError?: (error: unknown) => void;
  /** Told when counting a recall failed (the recall itself was answered; only the count is lost). */
  readonly onRecallCountError?: (error: unknown) => void;
  /** How long recall counts wait to be written together (recall-counts.ts' WRITE_DELAY_MS by default). */
  readonly recallCountsDelayMs?: number;
}

/** Most near-duplicates and tombstones reported by remember. */
const NEAR_LIMIT = 5;
/**
 * Near-duplicate candidates reach this far below NearDuplicateThreshold: a paraphrase in other words can score
 * lower than the threshold (0.74 for "renews on 14 July" / "renewal date is July 14th" with the local model), so
 * a candidate down here is skipped as the same fact only on the evidence of its words and similarity (comparerOf).
 */
const CANDIDATE_MARGIN = 0.15;
const NEAR_CANDIDATES = 20;
/**
 * Candidates found by their words as well, below the similarity margin (findNearMemories' worded search): the
 * full-text ranking's first 3 that say at least a fifth of the weight (idf) of the incoming text's first
 * WORDED_WORDS content words. A paraphrase the model scores low often keeps the rare words (names, codes, places):
 * on the fresh pairs' dev half, ask then listed 30 of 30 stored facts instead of 25 (a coverage of 0.5 listed 26).
 */
const WORDED = { limit: 3, minCoverage: 0.2 } as const;
const WORDED_WORDS = 40;
/**
 * The few nearest memories below the margin are candidates too, down to where same-fact.ts's lowest path still
 * reads a rewording (0.45, a shared booking reference or amount): a paraphrase in the first person and other words
 * ("The user's husband is called Karim" / "I'm married to Karim") can score there and share only a name that many
 * memories say. Under ask they fill the list after the likelier ones (listingOrder); on the blind pairs' dev half
 * ask then listed 30 of 30 stored facts instead of 28, and no distinct pair was taken for the same fact; from 0.45
 * instead of 0.55, skip_if_near recognised one more of the 192 dev paraphrases, ask listed one more, and no distinct
 * pair more was taken for the same fact (bench/README.md).
 */
const NEAREST_BELOW = { minSimilarity: 0.45, count: 3 } as const;
/** Longer than any text MaxTextChars allows: "the whole text". */
const WHOLE_TEXT = 1_000_000;
/** Most restatements recall shows under one memory (nearest first). */
const MATCHED_RESTATEMENTS = 3;
/** Rows an export reads per transaction. */
const EXPORT_BATCH = 500;
/**
 * memory_terms rows a remember writes per transaction (~2–3 ms on PGlite, whose one connection another subject’s
 * recall may be waiting for). A 16,000-character text has ~1,000; most memories have fewer than this, in one step.
 */
const TERMS_PER_STEP = 100;
/** Pending memories read per transaction when finishing them. */
const PENDING_BATCH = 100;
/** Wait before finishing pending memories again after a failure (the database was down). */
const TERMS_RETRY_MS = 5_000;

const refOf = (space: AccessibleSpace): SpaceRef => ({ id: space.id, name: space.name });

function spaceLookup(spaces: readonly AccessibleSpace[]): (key: string) => SpaceRef {
  const byKey = new Map(spaces.map((space) => [space.key, refOf(space)]));
  return (key) => byKey.get(key) ?? { id: key, name: key };
}

interface JudgedCandidate {
  readonly candidate: NearMemory;
  readonly comparison: FactComparison;
}

/**
 * Whether ask lists a candidate: the same fact, or one within the similarity margin, even sharing no content word
 * ("wedding anniversary is on 12 August" / "got married on 12 August", 0.74); below the margin, one that shares a
 * word or name as well: there the vectors alone also reach texts of the same shape about something else.
 */
function listed(judged: JudgedCandidate, threshold: number): boolean {
  return judged.comparison.same || withinMargin(judged, threshold) || judged.comparison.overlap > 0;
}

const withinMargin = ({ candidate }: JudgedCandidate, threshold: number): boolean => candidate.similarity >= threshold - CANDIDATE_MARGIN;

/**
 * Ask's order of two candidates (negative: `a` first): the same fact first; then those within the similarity
 * margin, by similarity; then those below it (found by their words, or among the few nearest), by the share of
 * words they have in common, then similarity: the model can score a paraphrase below unrelated texts of its shape.
 */
function listingOrder(a: JudgedCandidate, b: JudgedCandidate, threshold: number): number {
  const within = (judged: JudgedCandidate) => Number(withinMargin(judged, threshold));
  return (
    Number(b.comparison.same) - Number(a.comparison.same) ||
    within(b) - within(a) ||
    (within(a) === 1 ? 0 : b.comparison.overlap - a.comparison.overlap) ||
    b.candidate.similarity - a.candidate.similarity
  );
}

const addErased = (a: ErasedRows, b: ErasedRows): ErasedRows => ({
  memories: a.memories + b.memories,
  restatements: a.restatements + b.restatements,
  tombstones: a.tombstones + b.tombstones,
  webSessions: a.webSessions + b.webSessions,
});

/**
 * The memory domain: remember (secret check, dedup, tombstone report), recall (hybrid ranking within a character
 * budget), list, forget, correct and confirm, each in one subject-scoped transaction (a long text's remember then
 * writes the rest of its words in short transactions of their own: see TERMS_PER_STEP). Returns domain values;
 * throws ServiceErrors (SECRET_REJECTED, NOT_FOUND, EMBEDDING_ERROR from the provider, DATABASE_ERROR from the
 * database layer).
 */
export class MemoryService {
  readonly #options: MemoryServiceOptions;
  #termsRetry: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #recallCounts: RecallCounts;
  readonly #selfNames = new SelfNames();

  constructor(options: MemoryServiceOptions) {
    this.#options = options;
    this.#recallCounts = new RecallCounts(
      (caller, counts) => options.db.withSubject(caller, 'counting recalls', (trx) => recordRecalls(trx, counts)),
      (error) => options.onRecallCountError?.(error),
      options.recallCountsDelayMs,
    );
  }

  get #quota(): SubjectQuota {
    return this.#options.quota ?? NO_QUOTA;
  }

  async remember(caller: Caller, given: NewMemory, policy: DedupPolicy, space?: string): Promise<RememberResult> {
    rejectSecrets({ text: given.text, tags: given.tags, sourceProvider: given.sourceProvider, sessionId: given.sessionId });
    const principal = toPrincipal(caller);
    const memory = { ...given, tags: canonicalTags(given.tags) };
    const vectors = await this.#embedMemory(principal.subject, memory.text);
    const vector = vectors.whole;
    const threshold = this.#options.nearDuplicateThreshold;
    const exactScanLimit = this.#options.exactScanLimit ?? DEFAULT_EXACT_SCAN_LIMIT;
    const { result, termsPending, subject } = await this.#options.db.withSubject(principal, 'storing the memory', async (trx) => {
      const target = await resolveSpace(trx, principal, space, 'write');
      const subject = target.key;
      // A shared space was held for the write as it was resolved (holdForWrite); the personal space's lock is taken
      // here, by the near-duplicate check's first statement.
      const lockHere = target.personal;
      if (policy === 'insert' && lockHere) await lockSubjectForWrite(trx, subject);
      const candidates =
        policy === 'insert'
          ? []
          : await findNearMemories(trx, subject, vector, threshold - CANDIDATE_MARGIN, NEAR_CANDIDATES, exactScanLimit, {
              text: memory.text,
              lockForWrite: lockHere,
              // With NEAR_LIMIT candidates within the margin, ask's list is full of likelier ones.
              worded: { ...WORDED, unlessFound: NEAR_LIMIT, words: contentWords(memory.text).split(' ').slice(0, WORDED_WORDS).join(' ') },
              nearestBelow: NEAREST_BELOW,
            });
      // Best first: the same fact, then the most similar. Reading the incoming text's evidence is synchronous
      // (~10 ms for 16,000 characters, on the event loop and with the connection held): only when there is a candidate.
      const compare = candidates.length === 0 ? undefined : comparerOf(memory.text);
      const judged =
        compare === undefined
          ? []
          : candidates
              .map((candidate) => ({ candidate, comparison: compare(candidate.text, candidate.similarity) }))
              .filter((judged) => listed(judged, threshold))
              .sort((a, b) => listingOrder(a, b, threshold));
      const near = judged.slice(0, NEAR_LIMIT).map(({ candidate }) => candidate);
      const best = judged[0];
      if (policy === 'skip_if_near' && best?.comparison.same === true) {
        // Kept verbatim under the memory it restates: a wrong "same fact" then hides the text, never loses it.
        await checkQuota(trx, subject, this.#quota, memory.text, 'restatement');
        if (!(await insertRestatement(trx, subject, best.candidate.id, memory, vector))) throw new Error('the matched memory was not found under the write lock');
        const found: RememberResult = {
          memoryId: best.candidate.id,
          status: 'already_stored',
          matchedText: best.candidate.text,
          nearDuplicates: near,
          previouslyCorrected: [],
          space: refOf(target),
        };
        return { result: found, termsPending: false, subject };
      }
      await checkQuota(trx, subject, this.#quota, memory.text);
      const inserted = await insertMemoryNearTombstones(trx, subject, { ...memory, author: authorIn(subject, principal) }, vectors, { minSimilarity: threshold, limit: NEAR_LIMIT, termsAtOnce: TERMS_PER_STEP });
      const stored: RememberResult = {
        memoryId: inserted.memoryId,
        status: 'stored',
        matchedText: undefined,
        nearDuplicates: near,
        previouslyCorrected: inserted.tombstones,
        space: refOf(target),
      };
      return { result: stored, termsPending: inserted.termsPending, subject };
    });
    this.#selfNames.stored(subject, memory.text);
    if (termsPending) {
      // Committed: whatever happens now, the memory is stored and the answer says so. Its remaining words are
      // written before answering, so a recall after the answer finds it by any of them.
      await this.#finishTerms(principal, subject, result.memoryId).catch((error: unknown) => this.#termsFailed(error));
    }
    return result;
  }

  /**
   * Finishes the memory_terms rows of every memory left with some unwritten (a crash or a database failure
   * between a remember's steps): the service calls it as it starts. Never throws: a failure is reported to
   * onTermsError and the work is tried again a few seconds later, until it succeeds or close() is called.
   */
  async completePendingTerms(): Promise<void> {
    const { db } = this.#options;
    try {
      for (;;) {
        const pending = await db.withAllSubjects('finding memories with unwritten words', (trx) => pendingTermMemories(trx, PENDING_BATCH));
        for (const { subject, memoryId } of pending) await this.#finishTerms(undefined, subject, memoryId);
        if (pending.length < PENDING_BATCH) return;
      }
    } catch (error) {
      this.#termsFailed(error);
    }
  }

  /** Stops the retries of completePendingTerms and writes the recall counts still waiting. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#termsRetry);
    await this.#recallCounts.flush();
  }

  /**
   * Writes the memory's remaining memory_terms rows, a step per transaction, acting for `caller` (its writer), or
   * as maintenance when undefined (completePendingTerms at start, for memories of every space).
   */
  async #finishTerms(caller: Caller | undefined, subject: string, memoryId: number): Promise<void> {
    const { db } = this.#options;
    const activity = 'writing the memory’s words';
    const step = (trx: DbTransaction) => continueMemoryTerms(trx, subject, memoryId, TERMS_PER_STEP);
    while (!(await (caller === undefined ? db.withAllSubjects(activity, step) : db.withSubject(caller, activity, step)))) {
      // Between steps, other transactions (on PGlite: every other request) take their turn.
    }
  }

  #termsFailed(error: unknown): void {
    this.#options.onTermsError?.(error);
    if (this.#closed || this.#termsRetry !== undefined) return;
    this.#termsRetry = setTimeout(() => {
      this.#termsRetry = undefined;
      void this.completePendingTerms();
    }, TERMS_RETRY_MS).unref();
  }

  /**
   * The memories of the spaces asked for (the personal space by default) that best match `request.query`, best
   * first, within `request.maxChars` characters; several spaces are ranked as one set.
   */
  async recall(caller: Caller, request: RecallRequest): Promise<RecallResult> {
    const principal = toPrincipal(caller);
    // The names the user goes by, as last read from their personal space (its key is their subject).
    const names = this.#selfNames.known(principal.subject) ?? [];
    const vector = await this.#embed(principal.subject, questionToEmbed(namingUser(request.query, names)));
    const exactScanLimit = this.#options.exactScanLimit ?? DEFAULT_EXACT_SCAN_LIMIT;
    const result = await this.#options.db.withSubject(principal, 'recalling memories', async (trx): Promise<RecallResult> => {
      const spaces = await resolveSpaces(trx, principal, request.spaces, 'read');
      const keys = spaces.map((space) => space.key);
      const spaceOf = spaceLookup(spaces);
      // The user's names come from the personal space: in a shared one, a name is as likely another member's.
      const personal = spaces.find((space) => space.personal);
      const selfNames = {
        known: personal === undefined ? [] : names,
        toLearn:
          personal === undefined || !this.#selfNames.due(personal.key)
            ? undefined
            : { space: personal.key, count: NAME_TEXTS, chars: NAME_TEXT_CHARS, learn: (texts: readonly string[]) => this.#selfNames.read(personal.key, texts) },
      };
      const query = { text: request.query, vector, filters: request.filters, selfNames };
      const { ranked, restatements, records } = await rankMemories(trx, keys, query, { exactScanLimit, results: { limit: request.limit, maxChars: request.maxChars } });
      const top = ranked.slice(0, request.limit);
      const ordered = top.flatMap((item) => {
        const record = records.get(item.id);
        return record === undefined ? [] : [{ ...record, score: item.score }];
      });
      const { kept, cut } = fitToBudget(ordered, request.maxChars);
      return {
        memories: kept.map(({ row, truncated }) => ({
          ...toMemory(row, truncated, spaceOf(row.spaceKey)),
          score: row.score,
          matchedRestatements: (restatements.get(row.id) ?? []).slice(0, MATCHED_RESTATEMENTS).map(({ text, truncated: cut, createdAt }) => ({ text, textTruncated: cut, createdAt })),
        })),
        cutBy: cut ? 'max_chars' : ranked.length > request.limit ? 'limit' : undefined,
      };
    }, { readOnly: true });
    // How often each memory was recalled feeds the brief; counted after the answer, a failure never fails it.
    this.#recallCounts.add(principal, result.memories.map((memory) => memory.id));
    return result;
  }

  /**
   * What to know about the user at the start of a conversation, within `maxChars` characters: the memories of the
   * space (personal by default) that matter most (importance, recent confirmation or correction, how often
   * recalled), grouped by tag.
   */
  async brief(caller: Caller, maxChars: number, space?: string): Promise<Brief> {
    // The recalls answered so far count: a brief right after a recall sees it.
    await this.#recallCounts.flush();
    return this.#options.db.withSubject(caller, 'reading the brief', async (trx) => {
      const target = await resolveSpace(trx, caller, space, 'read');
      const candidates = await briefCandidates(trx, target.key, BRIEF_CANDIDATES_PER_LIST, BRIEF_TEXT_CHARS);
      return composeBrief(candidates, await subjectMemoryCount(trx, target.key), maxChars, new Date(), refOf(target));
    }, { readOnly: true });
  }

  /** One page of a space's memories (personal by default), newest first. */
  async list(caller: Caller, request: ListRequest): Promise<ListResult> {
    return this.#options.db.withSubject(caller, 'listing memories', async (trx) => {
      const target = await resolveSpace(trx, caller, request.space, 'read');
      const subject = target.key;
      const rows = await listPage(trx, subject, request, request.limit + 1);
      const page = rows.slice(0, request.limit);
      // A memory's restatements are listed with it, so they count in max_chars with its text.
      const restatements = await restatementsOf(trx, subject, page.map((row) => row.id));
      const restated = (id: number) => restatements.get(id) ?? [];
      const { kept, cut } = fitToBudget(
        page.map((row) => ({ row, textChars: row.textChars + restated(row.id).reduce((sum, restatement) => sum + codePointLength(restatement.text), 0) })),
        request.maxChars,
      );
      const more = cut || rows.length > request.limit;
      return {
        memories: kept.map(({ row: { row }, truncated }) => ({
          ...toMemory(row, truncated && row.textChars > request.maxChars, refOf(target)),
          // A first memory over the budget keeps the restatements (oldest first) that fit beside its text.
          restatements: truncated ? fitTexts(restated(row.id), request.maxChars - Math.min(row.textChars, request.maxChars)) : restated(row.id),
        })),
        next: more ? kept.at(-1)?.row.row.position : undefined,
        cutByBudget: cut,
      };
    });
  }

  /**
   * Removes a memory from recall, keeping a tombstone (reason forgotten). NOT_FOUND for a memory of a space the
   * caller is not a member of too (or not in `space`, when given); FORBIDDEN for a reader.
   */
  async forget(caller: Caller, memoryId: number, note: string | undefined, space?: string): Promise<ForgetResult> {
    rejectSecrets({ note });
    return this.#options.db.withSubject(caller, 'forgetting the memory', async (trx) => {
      const target = await this.#spaceOfRow(trx, caller, 'memories', memoryId, 'write', space);
      const subject = target.key;
      const removed = await deleteMemory(trx, subject, memoryId);
      if (removed === undefined) throw notFound(`memory ${memoryId}`);
      await insertTombstone(trx, subject, removed, 'forgotten', undefined, note);
      return { memoryId, space: refOf(target) };
    });
  }

  /**
   * Stores the corrected fact as a new memory in the same space and tombstones the old one (reason corrected,
   * replaced_by the new id), in one transaction: either both happen or neither.
   */
  async correct(caller: Caller, memoryId: number, correction: Correction, space?: string): Promise<CorrectResult> {
    rejectSecrets({
      text: correction.text,
      tags: correction.tags,
      sourceProvider: correction.sourceProvider,
      sessionId: correction.sessionId,
      note: correction.note,
    });
    const principal = toPrincipal(caller);
    const tags = correction.tags === undefined ? undefined : canonicalTags(correction.tags);
    const vectors = await this.#embedMemory(principal.subject, correction.text);
    return this.#options.db.withSubject(principal, 'correcting the memory', async (trx) => {
      const target = await this.#spaceOfRow(trx, principal, 'memories', memoryId, 'write', space);
      const subject = target.key;
      const removed = await deleteMemory(trx, subject, memoryId);
      if (removed === undefined) throw notFound(`memory ${memoryId}`);
      // The old memory is no longer counted: a correction needs room only for what its text adds.
      await checkQuota(trx, subject, this.#quota, correction.text);
      const newId = await insertMemory(
        trx,
        subject,
        {
          text: correction.text,
          tags: tags ?? removed.tags,
          importance: correction.importance ?? removed.importance,
          sourceProvider: correction.sourceProvider,
          captureMode: correction.captureMode,
          sessionId: correction.sessionId,
          expiresAt: correction.expiresAt,
          lastConfirmedAt: undefined,
          author: authorIn(subject, principal),
        },
        vectors,
      );
      await insertTombstone(trx, subject, removed, 'corrected', newId, correction.note);
      return { memoryId: newId, replacedMemoryId: memoryId, space: refOf(target) };
    });
  }

  /**
   * Makes one of the restatements a memory of its own in the same space (its fields, its own vectors; importance
   * and expiry as remember's defaults) and removes it from the memory it restated, in one transaction: nothing is
   * lost either way. NOT_FOUND for a restatement the caller may not read, or one already made a memory.
   */
  async separateRestatement(caller: Caller, restatementId: number): Promise<{ memoryId: number; formerMemoryId: number }> {
    const principal = toPrincipal(caller);
    const found = await this.#options.db.withSubject(principal, 'reading the restatement', async (trx) => {
      const target = await spaceOfRow(trx, 'memory_restatements', restatementId);
      return target === undefined ? undefined : readRestatement(trx, target.key, restatementId);
    }, { readOnly: true });
    if (found === undefined) throw notFound(`restatement ${restatementId}`);
    const vectors = await this.#embedMemory(principal.subject, found.text);
    return this.#options.db.withSubject(principal, 'making the restatement a memory', async (trx) => {
      const subject = (await this.#spaceOfRow(trx, principal, 'memory_restatements', restatementId, 'write', undefined)).key;
      const removed = await deleteRestatement(trx, subject, restatementId);
      if (removed === undefined) throw notFound(`restatement ${restatementId}`);
      const memoryId = await insertMemory(
        trx,
        subject,
        {
          text: removed.text,
          tags: removed.tags,
          sourceProvider: removed.sourceProvider ?? undefined,
          importance: 0.5,
          captureMode: removed.captureMode ?? undefined,
          sessionId: removed.sessionId ?? undefined,
          expiresAt: undefined,
          lastConfirmedAt: removed.createdAt,
          author: authorIn(subject, principal),
        },
        vectors,
        { createdAt: removed.createdAt, updatedAt: new Date() },
      );
      return { memoryId, formerMemoryId: removed.memoryId };
    });
  }

  /** Marks a memory as verified now (a reader may not: it changes what the brief puts first). */
  async confirm(caller: Caller, memoryId: number, space?: string): Promise<ConfirmResult> {
    return this.#options.db.withSubject(caller, 'confirming the memory', async (trx) => {
      const target = await this.#spaceOfRow(trx, caller, 'memories', memoryId, 'write', space);
      const confirmed = await confirmMemory(trx, target.key, memoryId);
      if (confirmed === undefined) throw notFound(`memory ${memoryId}`);
      return { memoryId, lastConfirmedAt: confirmed, space: refOf(target) };
    });
  }

  /** One memory, expired or not, with its whole text. NOT_FOUND for a memory the caller may not read too. */
  async get(caller: Caller, memoryId: number): Promise<Memory> {
    return this.#options.db.withSubject(caller, 'reading the memory', async (trx) => {
      const target = await this.#spaceOfRow(trx, caller, 'memories', memoryId, 'read', undefined);
      const record = await readMemory(trx, target.key, memoryId, WHOLE_TEXT);
      if (record === undefined) throw notFound(`memory ${memoryId}`);
      return toMemory(record, false, refOf(target));
    });
  }

  /** What a space keeps (personal by default), and the most it may (0: no limit). */
  async usage(caller: Caller, space?: string): Promise<{ readonly used: SubjectUsage; readonly quota: SubjectQuota }> {
    const used = await this.#options.db.withSubject(caller, 'reading usage', async (trx) => {
      const target = await resolveSpace(trx, caller, space, 'read');
      return subjectUsage(trx, target.key);
    });
    return { used, quota: this.#quota };
  }

  /** How many memories (expired ones included) and tombstones a space has (personal by default). */
  async counts(caller: Caller, space?: string): Promise<{ memories: number; tombstones: number }> {
    return this.#options.db.withSubject(caller, 'counting memories', async (trx) => {
      const target = await resolveSpace(trx, caller, space, 'read');
      return { memories: await subjectMemoryCount(trx, target.key), tombstones: await countTombstones(trx, target.key) };
    });
  }

  /** The tags of a space's live memories (personal by default), most used first. */
  async tags(caller: Caller, limit: number, space?: string): Promise<TagCount[]> {
    return this.#options.db.withSubject(caller, 'reading tags', async (trx) => {
      const target = await resolveSpace(trx, caller, space, 'read');
      return tagCounts(trx, target.key, limit);
    });
  }

  /** One page of what was corrected or forgotten in a space (personal by default), newest first. */
  async tombstones(caller: Caller, request: { readonly after: TombstonePosition | undefined; readonly limit: number; readonly space?: string | undefined }): Promise<TombstonePage> {
    return this.#options.db.withSubject(caller, 'listing tombstones', async (trx) => {
      const target = await resolveSpace(trx, caller, request.space, 'read');
      const rows = await tombstonePage(trx, target.key, { after: request.after, order: 'newest', rows: request.limit + 1 });
      const page = rows.slice(0, request.limit);
      return { tombstones: page, next: rows.length > request.limit ? page.at(-1)?.position : undefined };
    });
  }

  /**
   * Erases the record that memory `memoryId` was corrected or forgotten (NOT_FOUND when there is none), or
   * every such record of the space (personal by default) when `memoryId` is undefined; returns how many went.
   */
  async eraseTombstones(caller: Caller, memoryId: number | undefined, space?: string): Promise<number> {
    return this.#options.db.withSubject(caller, 'erasing tombstones', async (trx) => {
      const target = await holdForWrite(trx, caller, (await resolveSpace(trx, caller, space, 'read')).key);
      const erased = await eraseTombstones(trx, target.key, memoryId);
      if (memoryId !== undefined && erased === 0) throw notFound(`tombstone of memory ${memoryId}`);
      return erased;
    });
  }

  /**
   * Deletes everything stored of the subject, at once: their personal space (memories, tombstones, their index
   * rows and counts), the spaces they own with all they hold, their memberships of others' spaces and their web
   * sessions. What they wrote in others' spaces stays there: it belongs to those spaces.
   */
  async eraseEverything(caller: Caller): Promise<ErasedRows> {
    const { subject } = toPrincipal(caller);
    // The whole person, whatever a token was limited to: the page's own session is never limited.
    const erased = await this.#options.db.withSubject(subject, 'deleting all data', async (trx) => {
      await lockSubjectForWrite(trx, subject);
      const owned = await ownedSpaceKeys(trx, subject);
      let erased = await eraseSubject(trx, subject);
      // The spaces themselves too (their members with them): left behind, each would be an empty space of nobody's.
      for (const key of owned) {
        const gone = await eraseSharedSpace(trx, key);
        if (gone !== undefined) erased = addErased(erased, gone);
      }
      await removeMemberships(trx, subject);
      return erased;
    });
    // Nothing read from their memories outlives them, in this process either.
    this.#selfNames.forget(subject);
    return erased;
  }

  /**
   * Every memory (expired ones too, oldest first) and then every tombstone of a space (personal by default), read
   * a batch per transaction so that an export of any size holds neither the whole set in memory nor the database.
   */
  async *exportRecords(caller: Caller, space?: string): AsyncGenerator<ExportRecord> {
    const { db } = this.#options;
    const { key: subject } = await db.withSubject(caller, 'finding the space', (trx) => resolveSpace(trx, caller, space, 'read'), { readOnly: true });
    let after: ListPosition | undefined;
    for (;;) {
      const page = await db.withSubject(caller, 'exporting memories', (trx) => exportMemoryPage(trx, subject, after, EXPORT_BATCH));
      for (const { memory } of page) yield { kind: 'memory', memory };
      if (page.length < EXPORT_BATCH) break;
      after = page.at(-1)!.position;
    }
    let afterTombstone: TombstonePosition | undefined;
    for (;;) {
      const page = await db.withSubject(caller, 'exporting tombstones', (trx) =>
        tombstonePage(trx, subject, { after: afterTombstone, order: 'oldest', rows: EXPORT_BATCH }),
      );
      for (const { position: _position, ...tombstone } of page) yield { kind: 'tombstone', tombstone };
      if (page.length < EXPORT_BATCH) break;
      afterTombstone = page.at(-1)!.position;
    }
  }

  /** Imports memories and tombstones read from a file (see import.ts) into a space (personal by default); never throws for a refused item. */
  async import(caller: Caller, items: AsyncIterable<ImportItem>, options: ImportOptions, space?: string): Promise<ImportSummary> {
    const principal = toPrincipal(caller);
    // Checked before the file is read; each batch holds the space for its writes (importItems).
    const target = await this.#options.db.withSubject(principal, 'finding the space', async (trx) => writable(await resolveSpace(trx, principal, space, 'read')), { readOnly: true });
    return importItems(this.#options.db, this.#options.embedder, { principal, space: target.key }, items, { ...options, quota: this.#quota });
  }

  /**
   * The space memory (or restatement) `id` lives in, with the caller's role: NOT_FOUND when they may not read it
   * (or it is not in `space`, when given), FORBIDDEN when `need` is write and they are a reader there. For a
   * write, the space is held for it (holdForWrite: its write lock, the role read again under it).
   */
  async #spaceOfRow(trx: DbTransaction, caller: Caller, table: 'memories' | 'memory_restatements', id: number, need: Need, space: string | undefined): Promise<AccessibleSpace> {
    const principal = toPrincipal(caller);
    const what = `${table === 'memories' ? 'memory' : 'restatement'} ${id}`;
    const row = await spaceOfRow(trx, table, id);
    if (row === undefined) throw notFound(what);
    const found = toAccessible(row, principal.subject);
    if (space !== undefined) {
      const named = await resolveSpace(trx, principal, space, 'read');
      if (named.key !== found.key) throw notFound(`${what} in space ${JSON.stringify(space)}`);
    }
    if (need === 'read') return found;
    // Refused before waiting for the lock; holdForWrite asks again under it.
    if (found.role === 'reader') throw forbidden(`you may read space "${found.name}" but not change it (your role there is reader)`);
    return holdForWrite(trx, principal, found.key);
  }

  /** A memory's text embedded whole and by passages (embedMemoryTexts), the subject as the provider's fairness key. */
  async #embedMemory(subject: string, text: string): Promise<MemoryVectors> {
    const [vectors] = await embedMemoryTexts(this.#options.embedder, [text], subject);
    if (vectors === undefined) throw embeddingError('the embedding provider returned no vector');
    return vectors;
  }

  /** Embeds one of `subject`'s texts (the subject is the provider's fairness key) as a vector tagged with its model. */
  async #embed(subject: string, text: string): Promise<StoredVector> {
    const { embedder } = this.#options;
    const [vector] = await embedder.embed([text], { key: subject });
    if (vector === undefined) throw embeddingError('the embedding provider returned no vector');
    return storedVector(vector, embedder.model);
  }
}
