import type { DatabaseHandle } from '../db/open-database.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';
import { databaseError, isServiceError, notFound, secretRejected } from '../errors.js';
import { hasFilters } from './filter-sql.js';
import { encodeCursor } from './list-cursor.js';
import { listPage } from './list-repository.js';
import { fitToBudget, toView } from './memory-view.js';
import { contentWords } from './query-analysis.js';
import { fuseRankings, type Ranking } from './rank-fusion.js';
import { fetchMemories, subjectMemoryCount, textRanking, vectorRanking, type VectorPlan } from './recall-repository.js';
import {
  confirmMemory,
  deleteMemory,
  findNearMemories,
  findNearTombstones,
  insertMemory,
  insertTombstone,
  lockSubjectForWrite,
  type StoredVector,
} from './repository.js';
import { compareFacts } from './same-fact.js';
import { looksLikeSecret } from './secrets.js';
import type {
  Correction,
  DedupPolicy,
  ListOutcome,
  ListRequest,
  MemoryFilters,
  NewMemory,
  RecallOutcome,
  RecallRequest,
  RecallStrategy,
  RememberOutcome,
} from './types.js';
import { toVectorLiteral } from './vector.js';

export interface MemoryServiceOptions {
  readonly db: DatabaseHandle;
  readonly embedder: EmbeddingProvider;
  readonly nearDuplicateThreshold: number;
  /** Told about database failures (the cause), so the caller can log them; never given memory text. */
  readonly onDatabaseError?: (error: unknown) => void;
  /** Candidate sets up to this size are ranked by exact vector search (see vectorRanking). */
  readonly exactScanLimit?: number;
}

const NEAR_LIMIT = 5;
/**
 * Near-duplicate candidates reach this far below NearDuplicateThreshold: a paraphrase in other words can score
 * lower than the threshold (0.74 for "renews on 14 July" / "renewal date is July 14th" with the local model), so
 * a candidate down here is listed, or skipped as the same fact, only on the evidence of its words (compareFacts).
 */
const CANDIDATE_MARGIN = 0.15;
const NEAR_CANDIDATES = 20;
/** Share of content words and names in common that lists a candidate below the threshold. */
const LISTED_OVERLAP = 0.3;
/** How deep each retriever ranks before fusion: at least twice the largest recall limit. */
const RANKING_DEPTH = 100;
/**
 * Fusion constants, measured on LoCoMo turns and observations and the development set (bench/README.md, "Recall and dedup
 * quality"): a small k lets the top of each list count; the full-text ranking, which finds names, dates and
 * numbers, weighs more than the vectors, but only as far as a hit covers the question: one whose matching words
 * carry less than FULL_COVERAGE of the query's idf mass is scaled down in proportion (a shared "user", "work" or
 * modal verb next to the question's real subject), one at or above it counts fully.
 */
const RRF_K = 35;
const VECTOR_WEIGHT = 1;
const TEXT_WEIGHT = 1.75;
const FULL_COVERAGE = 0.4;
export const DEFAULT_EXACT_SCAN_LIMIT = 5000;

export class MemoryService {
  readonly #options: MemoryServiceOptions;

  constructor(options: MemoryServiceOptions) {
    this.#options = options;
  }

  get db(): DatabaseHandle {
    return this.#options.db;
  }

  /** Embeds one text as a vector tagged with its model. Throws EMBEDDING_ERROR. */
  async embed(text: string): Promise<StoredVector> {
    const { embedder } = this.#options;
    const [vector] = await embedder.embed([text]);
    return { literal: toVectorLiteral(vector!), model: embedder.model, dimensions: vector!.length };
  }

  async remember(subject: string, memory: NewMemory, policy: DedupPolicy): Promise<RememberOutcome> {
    if (looksLikeSecret(memory.text)) throw secretRejected();
    const vector = await this.embed(memory.text);
    const threshold = this.#options.nearDuplicateThreshold;
    return this.inTransaction(subject, 'storing the memory', async (trx) => {
      await lockSubjectForWrite(trx, subject);
      const candidates = policy === 'insert' ? [] : await findNearMemories(trx, subject, vector, threshold - CANDIDATE_MARGIN, NEAR_CANDIDATES);
      // Best first: the same fact, then the most similar.
      const judged = candidates
        .map((candidate) => ({ candidate, comparison: compareFacts(candidate.text, memory.text) }))
        .filter(({ candidate, comparison }) => candidate.similarity >= threshold || comparison.same || comparison.overlap >= LISTED_OVERLAP)
        .sort((a, b) => Number(b.comparison.same) - Number(a.comparison.same) || b.candidate.similarity - a.candidate.similarity);
      const near = judged.slice(0, NEAR_LIMIT).map(({ candidate }) => candidate);
      if (policy === 'skip_if_near' && judged[0]?.comparison.same === true) {
        return { ok: true, memory_id: judged[0].candidate.memory_id, message: 'Already remembered', near_duplicates: near };
      }
      const memoryId = await insertMemory(trx, subject, memory, vector);
      const corrected = await findNearTombstones(trx, subject, vector, threshold, NEAR_LIMIT);
      const notes = [
        near.length > 0 ? `${near.length} similar ${near.length === 1 ? 'memory exists' : 'memories exist'} (see near_duplicates)` : '',
        corrected.length > 0 ? 'a similar fact was corrected or forgotten before (see previously_corrected)' : '',
      ].filter((note) => note !== '');
      return {
        ok: true,
        memory_id: memoryId,
        message: notes.length === 0 ? 'Remembered' : `Remembered; ${notes.join('; ')}`,
        ...(policy === 'ask' ? { near_duplicates: near } : {}),
        ...(corrected.length > 0 ? { previously_corrected: corrected } : {}),
      };
    });
  }

  /**
   * The subject's memories that best match `query`: vector similarity and full-text rank fused (see
   * docs in README, "Recall and the memory tools"). `strategy` other than hybrid is for benchmarks.
   */
  async recall(subject: string, request: RecallRequest, strategy: RecallStrategy = 'hybrid'): Promise<RecallOutcome & { plan?: VectorPlan }> {
    const vector = strategy === 'text' ? undefined : await this.embed(request.query);
    const exactScanLimit = this.#options.exactScanLimit ?? DEFAULT_EXACT_SCAN_LIMIT;
    return this.inTransaction(subject, 'recalling memories', async (trx) => {
      const rankings: Ranking[] = [];
      let plan: VectorPlan | undefined;
      const subjectMemories = await subjectMemoryCount(trx, subject);
      if (vector !== undefined) {
        const ranked = await vectorRanking(trx, subject, request.filters, vector, RANKING_DEPTH, { exactScanLimit, subjectMemories });
        rankings.push({ ids: ranked.ids, weight: VECTOR_WEIGHT });
        plan = ranked.plan;
      }
      if (strategy !== 'vector') {
        const hits = await textRanking(trx, subject, request.filters, contentWords(request.query), RANKING_DEPTH, subjectMemories);
        rankings.push({ ids: hits.map((hit) => hit.id), weight: TEXT_WEIGHT, confidence: hits.map((hit) => Math.min(1, hit.coverage / FULL_COVERAGE)) });
      }
      const fused = fuseRankings(rankings, RRF_K);
      const top = fused.slice(0, request.limit);
      const rows = new Map((await fetchMemories(trx, subject, top.map((item) => item.id), request.maxChars)).map((row) => [row.id, row]));
      const ordered = top.flatMap((item) => {
        const row = rows.get(item.id);
        return row === undefined ? [] : [{ ...row, score: item.score }];
      });
      const { kept, cut } = fitToBudget(ordered, request.maxChars);
      const memories = kept.map(({ row, truncated }) => ({ ...toView(row, truncated), score: round(row.score) }));
      const cutBy = cut ? 'max_chars' : fused.length > request.limit ? 'limit' : null;
      return { ok: true as const, memories, cut_by: cutBy, message: recallMessage(memories.length, cutBy, request.filters), ...(plan === undefined ? {} : { plan }) };
    });
  }

  /** One page of the subject's memories, newest first. */
  async listMemories(subject: string, request: ListRequest): Promise<ListOutcome> {
    return this.inTransaction(subject, 'listing memories', async (trx) => {
      const rows = await listPage(trx, subject, request, request.limit + 1);
      const page = rows.slice(0, request.limit);
      const { kept, cut } = fitToBudget(page, request.maxChars);
      const more = cut || rows.length > request.limit;
      const last = kept.at(-1)?.row;
      const memories = kept.map(({ row, truncated }) => toView(row, truncated));
      const nextCursor = more && last !== undefined ? encodeCursor({ createdAt: last.position, id: last.id }) : null;
      const message =
        memories.length === 0
          ? request.cursor === undefined ? 'No memories stored' + (hasFilters(request.filters) ? ' that match these filters' : '') : 'No more memories'
          : `${memories.length} ${memories.length === 1 ? 'memory' : 'memories'}, newest first` +
            (nextCursor === null ? '; this is the last page' : `; more follow${cut ? ' (max_chars reached)' : ''}: pass next_cursor as cursor`);
      return { ok: true, memories, next_cursor: nextCursor, message };
    });
  }

  /** Removes a memory from recall, keeping a tombstone (reason forgotten). NOT_FOUND for another subject's id too. */
  async forget(subject: string, memoryId: number, note: string | undefined): Promise<{ ok: true; memory_id: number; message: string }> {
    if (note !== undefined && looksLikeSecret(note)) throw secretRejected('reason');
    return this.inTransaction(subject, 'forgetting the memory', async (trx) => {
      await lockSubjectForWrite(trx, subject);
      const removed = await deleteMemory(trx, subject, memoryId);
      if (removed === undefined) throw notFound(`memory ${memoryId}`);
      await insertTombstone(trx, subject, removed, 'forgotten', null, note);
      return { ok: true, memory_id: memoryId, message: 'Forgotten; it will not be recalled again' };
    });
  }

  /**
   * Stores the corrected fact as a new memory and tombstones the old one (reason corrected, replaced_by the
   * new id), in one transaction: either both happen or neither.
   */
  async correct(
    subject: string,
    memoryId: number,
    correction: Correction,
  ): Promise<{ ok: true; memory_id: number; replaced_memory_id: number; message: string }> {
    if (looksLikeSecret(correction.text)) throw secretRejected();
    if (correction.note !== undefined && looksLikeSecret(correction.note)) throw secretRejected('reason');
    const vector = await this.embed(correction.text);
    return this.inTransaction(subject, 'correcting the memory', async (trx) => {
      await lockSubjectForWrite(trx, subject);
      const removed = await deleteMemory(trx, subject, memoryId);
      if (removed === undefined) throw notFound(`memory ${memoryId}`);
      const newId = await insertMemory(
        trx,
        subject,
        {
          text: correction.text,
          tags: correction.tags ?? removed.tags,
          importance: correction.importance ?? removed.importance,
          sourceProvider: correction.sourceProvider,
          captureMode: correction.captureMode,
          sessionId: correction.sessionId,
          expiresAt: correction.expiresAt,
          lastConfirmedAt: undefined,
        },
        vector,
      );
      await insertTombstone(trx, subject, removed, 'corrected', newId, correction.note);
      return {
        ok: true,
        memory_id: newId,
        replaced_memory_id: memoryId,
        message: `Corrected; memory ${memoryId} was replaced by memory ${newId}`,
      };
    });
  }

  /** Marks a memory as verified now. */
  async confirm(subject: string, memoryId: number): Promise<{ ok: true; memory_id: number; last_confirmed_at: string; message: string }> {
    return this.inTransaction(subject, 'confirming the memory', async (trx) => {
      const confirmed = await confirmMemory(trx, subject, memoryId);
      if (confirmed === undefined) throw notFound(`memory ${memoryId}`);
      return { ok: true, memory_id: memoryId, last_confirmed_at: confirmed.toISOString(), message: 'Confirmed as still true' };
    });
  }

  /**
   * Runs `work` in one subject-scoped transaction; any database failure becomes DATABASE_ERROR and,
   * the transaction being rolled back, leaves nothing half-done.
   */
  async inTransaction<T>(
    subject: string,
    activity: string,
    work: Parameters<DatabaseHandle['withSubject']>[1] extends (trx: infer X) => Promise<unknown> ? (trx: X) => Promise<T> : never,
  ): Promise<T> {
    try {
      return await this.#options.db.withSubject(subject, work);
    } catch (error) {
      // Ours, or a programming error: neither is the database's fault.
      if (isServiceError(error) || error instanceof TypeError || error instanceof ReferenceError) throw error;
      this.#options.onDatabaseError?.(error);
      throw databaseError(`the database failed while ${activity}; nothing was changed`, error);
    }
  }
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

function recallMessage(count: number, cutBy: RecallOutcome['cut_by'], filters: MemoryFilters): string {
  if (count === 0) return `No stored memory matches${hasFilters(filters) ? ' with these filters' : ''}`;
  const found = `${count} ${count === 1 ? 'memory' : 'memories'}, best match first`;
  if (cutBy === 'limit') return `${found}; more are stored, less relevant (raise limit to see them)`;
  if (cutBy === 'max_chars') return `${found}; cut short by max_chars (raise it, or narrow the query, to see more)`;
  return found;
}
