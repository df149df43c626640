import { allocateMemoryId, memoriesWithTexts, tombstonesWithTexts } from '../db/memories/transfer.js';
import { insertMemory } from '../db/memories/memories.js';
import { insertImportedRestatements, restatementsOf } from '../db/memories/restatements.js';
import { insertTombstone } from '../db/memories/tombstones.js';
import { authorIn, holdForWrite } from '../spaces/spaces.js';
import type { DatabaseHandle, Principal } from '../db/open-database.js';
import { toVectorLiteral, type MemoryVectors, type StoredVector } from '../db/pgvector.js';
import type { DbTransaction } from '../db/schema.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';
import { subjectUsage } from '../db/memories/subject-stats.js';
import { isServiceError, quotaExceeded } from '../errors.js';
import { embedMemoryTexts, embedTombstoneTexts } from './passages.js';
import { NO_QUOTA, quotaProblem, textBytesOf, type SubjectQuota } from './quota.js';
import { rejectSecrets } from './secrets.js';
import { canonicalTags } from './tags.js';
import type { ImportItem, ImportRefusal, ImportSource, ImportSummary, NewMemory, Restatement, TombstoneReason } from './types.js';

/** Refusals reported by reason, in file order; past this many only their number. */
export const MAX_REPORTED_REFUSALS = 100;

export interface ImportOptions {
  /** Items embedded and stored together: one transaction each. */
  readonly batchSize: number;
  /**
   * Embedding calls a batch is split into, made at once, each under a fairness key of its own (default 1: one
   * call under the subject's key, as a request's). The CLI, which serves no one else, uses every worker.
   */
  readonly streams?: number;
  /** Told the running totals after every batch. */
  readonly onBatch?: (summary: ImportSummary) => void;
  /** What the subject may keep; the import stops at it, keeping what was stored. */
  readonly quota?: SubjectQuota;
}

type Prepared =
  | {
      readonly kind: 'memory';
      readonly key: string;
      readonly formerId: number | undefined;
      readonly memory: NewMemory;
      readonly timestamps: Extract<ImportItem, { kind: 'memory' }>['timestamps'];
      /** Tags normalised, like the memory's. */
      readonly restatements: readonly Restatement[];
    }
  | {
      readonly kind: 'tombstone';
      readonly key: string;
      readonly formerId: number | undefined;
      readonly item: Extract<ImportItem, { kind: 'tombstone' }>;
      readonly tags: string[];
      readonly restatements: readonly Restatement[];
    };

/**
 * Imports a stream of items into the subject's memories, batch by batch, and says what happened.
 *
 * Every memory passes remember's checks (secrets in every stored field, then tag normalisation); a refused item
 * is reported by its line and reason and stores nothing. An item already stored is skipped: a memory with the
 * same text and the same tags (as a set, normalised), a tombstone with the same text, reason and time. So
 * importing the same file twice stores it once, and an import that stopped half-way (a failure, or the process
 * killed) continues where it stopped when run again: duplicates are looked up before anything is embedded.
 * Each batch is embedded (in `streams` calls at once) and stored in one transaction, under the subject's write lock.
 *
 * Tombstones keep pointing at the memory that replaced them: ids of the file (the exporting database's) are
 * mapped to this database's as memories are stored, and a tombstone gets a new id from the memories' sequence.
 */
export async function importItems(
  db: DatabaseHandle,
  embedder: EmbeddingProvider,
  target: ImportTarget | string,
  items: AsyncIterable<ImportItem>,
  options: ImportOptions,
): Promise<ImportSummary> {
  const into = typeof target === 'string' ? { principal: { subject: target }, space: target } : target;
  const run = new ImportRun(db, embedder, into, options.streams ?? 1, options.quota ?? NO_QUOTA);
  let batch: ImportItem[] = [];
  try {
    for await (const item of items) {
      batch.push(item);
      if (batch.length < options.batchSize) continue;
      await run.importBatch(batch);
      batch = [];
      options.onBatch?.(run.summary(undefined));
    }
    if (batch.length > 0) {
      await run.importBatch(batch);
      options.onBatch?.(run.summary(undefined));
    }
  } catch (error) {
    if (!isServiceError(error)) throw error;
    return run.summary({ code: error.code, message: error.message });
  }
  return run.summary(undefined);
}

/** Who imports (row-level security acts for them) and the key of the space the items go to. */
export interface ImportTarget {
  readonly principal: Principal;
  readonly space: string;
}

class ImportRun {
  readonly #db: DatabaseHandle;
  readonly #embedder: EmbeddingProvider;
  readonly #principal: Principal;
  readonly #subject: string;
  readonly #quota: SubjectQuota;
  /** The fairness keys of a batch's embedding calls, made at once: the subject's alone, or one per stream. */
  readonly #embeddingKeys: readonly string[];
  /** Ids of the exporting database → ids here, for the tombstones' replaced_by. */
  readonly #ids = new Map<number, number>();
  /**
   * Ids drawn from the sequence for a replaced_by met before the tombstone it names, and not yet given to one. A
   * tombstone takes its former id's mapping only from here: never the id of a memory (or tombstone) already
   * stored, which a crafted file could name (finding 9: that memory could then not be forgotten or corrected).
   */
  readonly #reserved = new Set<number>();
  #memories = 0;
  #tombstones = 0;
  #skipped = 0;
  #refused = 0;
  readonly #refusals: ImportRefusal[] = [];

  constructor(db: DatabaseHandle, embedder: EmbeddingProvider, target: ImportTarget, streams: number, quota: SubjectQuota) {
    this.#db = db;
    this.#embedder = embedder;
    this.#principal = target.principal;
    this.#subject = target.space;
    this.#quota = quota;
    this.#embeddingKeys = streams <= 1 ? [target.principal.subject] : Array.from({ length: streams }, (_, index) => `import:${index}`);
  }

  /** `embed` over consecutive parts of `texts`, one per embedding key, all at once; the results in the texts' order. */
  async #inParts<T>(texts: readonly string[], embed: (part: string[], key: string) => Promise<T[]>): Promise<T[]> {
    const size = Math.ceil(texts.length / this.#embeddingKeys.length);
    const parts = this.#embeddingKeys.map((key, index) => ({ key, part: texts.slice(index * size, (index + 1) * size) })).filter(({ part }) => part.length > 0);
    return (await Promise.all(parts.map(({ key, part }) => embed(part, key)))).flat();
  }

  summary(stoppedBy: ImportSummary['stoppedBy']): ImportSummary {
    return {
      memoriesImported: this.#memories,
      tombstonesImported: this.#tombstones,
      duplicatesSkipped: this.#skipped,
      refused: this.#refused,
      refusals: [...this.#refusals],
      stoppedBy,
    };
  }

  async importBatch(batch: readonly ImportItem[]): Promise<void> {
    const prepared: Prepared[] = [];
    /** Later items of this batch that repeat an earlier one: skipped, their former ids mapped once it is stored. */
    const repeats: Prepared[] = [];
    const keys = new Set<string>();
    for (const item of batch) {
      const ready = this.#prepare(item);
      if (ready === undefined) continue;
      if (keys.has(ready.key)) {
        repeats.push(ready);
        continue;
      }
      keys.add(ready.key);
      prepared.push(ready);
    }
    // A batch of refusals (a file of junk lines) asks nothing of the database.
    if (prepared.length === 0) return;
    const subject = this.#subject;
    // Looked up before embedding, so a resumed import re-embeds nothing it already stored.
    const { stored, lacking } = await this.#db.withSubject(this.#principal, 'reading memories to import', async (trx) => {
      const found = await storedKeys(trx, subject, prepared);
      return { stored: found, lacking: await lackingRestatements(trx, subject, prepared, found) };
    });
    const fresh = prepared.filter((item) => !stored.has(item.key));
    // A memory's passages are embedded with it (for recall); a tombstone keeps its whole text's vector only.
    const freshMemories = fresh.filter((item) => item.kind === 'memory');
    const freshTombstones = fresh.filter((item) => item.kind === 'tombstone');
    const memoryVectors = await this.#inParts(freshMemories.map(textOf), (part, key) => embedMemoryTexts(this.#embedder, part, key));
    const tombstoneVectors = await this.#inParts(freshTombstones.map(textOf), (part, key) => embedTombstoneTexts(this.#embedder, part, key));
    const vectorsOf = new Map<Prepared, MemoryVectors>([
      ...freshMemories.map((item, index) => [item, memoryVectors[index]!] as const),
      ...freshTombstones.map((item, index) => [item, tombstoneVectors[index]!] as const),
    ]);
    // A restatement keeps its whole text's vector, as remember stores it.
    const restatements = [...freshMemories.flatMap((item) => item.restatements), ...lacking.flatMap((missing) => missing.restatements)];
    const restatementVectors = await this.#inParts(restatements.map((restatement) => restatement.text), (part, key) => embedTombstoneTexts(this.#embedder, part, key));
    const restatementVectorOf = new Map(restatements.map((restatement, index) => [restatement, restatementVectors[index]!.whole]));

    const written = await this.#db.withSubject(this.#principal, 'importing memories', async (trx) => {
      // Each batch its own transaction: the importer may have been removed from the space since the last.
      await holdForWrite(trx, this.#principal, subject);
      // Again under the lock: another import of the same file may have stored some meanwhile.
      const now = await storedKeys(trx, subject, fresh);
      const ids = new Map(this.#ids);
      const reserved = new Set(this.#reserved);
      const idsByKey = new Map([...stored, ...now]);
      let memories = 0;
      let tombstones = 0;
      let overQuota: string | undefined;
      const usage = await subjectUsage(trx, subject);
      let textBytes = usage.textBytes;
      for (const item of fresh) {
        if (now.has(item.key)) continue;
        const vectors = vectorsOf.get(item)!;
        if (item.kind === 'memory') {
          const bytes = textBytesOf(item.memory.text);
          // What fits is stored; the import stops at the first memory that does not.
          overQuota = quotaProblem(this.#quota, { memories: usage.memories + memories, textBytes }, bytes);
          if (overQuota !== undefined) break;
          textBytes += bytes;
          const id = await insertMemory(trx, subject, { ...item.memory, author: authorIn(subject, this.#principal) }, vectors, item.timestamps);
          await insertImportedRestatements(trx, subject, id, item.restatements.map((restatement) => ({ restatement, vector: restatementVectorOf.get(restatement)! })));
          idsByKey.set(item.key, id);
          memories += 1;
        } else {
          const { item: tombstone } = item;
          const mapped = item.formerId === undefined ? undefined : ids.get(item.formerId);
          const id = mapped !== undefined && reserved.delete(mapped) ? mapped : await allocateMemoryId(trx);
          const replacedBy = tombstone.formerReplacedBy === undefined ? undefined : await mappedId(trx, ids, reserved, tombstone.formerReplacedBy);
          await insertTombstone(
            trx,
            subject,
            { id, text: tombstone.text, tags: item.tags, ...vectorFields(vectors.whole), wholeFromPassages: true, createdAt: tombstone.memoryCreatedAt, restatements: item.restatements },
            tombstone.reason,
            replacedBy,
            tombstone.note,
            tombstone.tombstonedAt,
          );
          idsByKey.set(item.key, id);
          tombstones += 1;
        }
      }
      // A memory already stored keeps the file's restatements it lacks: a text once answered "Already remembered"
      // is not dropped because its memory was imported (or remembered) before. Checked again under the lock.
      const stillLacking = await lackingRestatements(trx, subject, prepared.filter((item) => stored.has(item.key)), stored);
      for (const missing of stillLacking) {
        const vectors = missing.restatements.map((restatement) => ({ restatement, vector: restatementVectorOf.get(restatement) }));
        const ready = vectors.filter((entry): entry is { restatement: Restatement; vector: StoredVector } => entry.vector !== undefined);
        await insertImportedRestatements(trx, subject, missing.memoryId, ready);
      }
      for (const item of [...prepared, ...repeats]) {
        const id = idsByKey.get(item.key);
        if (item.formerId !== undefined && id !== undefined) ids.set(item.formerId, id);
      }
      return { memories, tombstones, ids, reserved, overQuota, skipped: fresh.filter((item) => now.has(item.key)).length };
    });
    // Counted only once the transaction has committed.
    for (const [former, id] of written.ids) this.#ids.set(former, id);
    this.#reserved.clear();
    for (const id of written.reserved) this.#reserved.add(id);
    this.#memories += written.memories;
    this.#tombstones += written.tombstones;
    this.#skipped += repeats.length + prepared.length - fresh.length + written.skipped;
    if (written.overQuota !== undefined) throw quotaExceeded(written.overQuota);
  }

  /** Remember's checks for one item; undefined (and counted) when it is refused. */
  #prepare(item: ImportItem): Prepared | undefined {
    if (item.kind === 'refused') return this.#refuse(item.source, item.reason);
    try {
      if (item.kind === 'memory') {
        const { memory } = item;
        rejectSecrets({ text: memory.text, tags: memory.tags, sourceProvider: memory.sourceProvider, sessionId: memory.sessionId });
        const tags = canonicalTags(memory.tags);
        const restatements = checkedRestatements(item.restatements);
        return { kind: 'memory', key: memoryKey(memory.text, tags), formerId: item.formerId, memory: { ...memory, tags }, timestamps: item.timestamps, restatements };
      }
      rejectSecrets({ text: item.text, tags: item.tags, note: item.note });
      const tags = canonicalTags(item.tags);
      const restatements = checkedRestatements(item.restatements);
      return { kind: 'tombstone', key: tombstoneKey(item.text, item.reason, item.tombstonedAt), formerId: item.formerId, item, tags, restatements };
    } catch (error) {
      if (!isServiceError(error)) throw error;
      return this.#refuse(item.source, error.field === undefined ? error.message : `${error.field} ${error.message}`);
    }
  }

  #refuse(source: ImportSource, reason: string): undefined {
    this.#refused += 1;
    if (this.#refusals.length < MAX_REPORTED_REFUSALS) this.#refusals.push({ source, reason });
    return undefined;
  }
}

/** Restatements pass remember's checks as their memory does: secrets refused (the whole line), tags normalised. */
function checkedRestatements(restatements: readonly Restatement[]): Restatement[] {
  return restatements.map((restatement) => {
    rejectSecrets({ text: restatement.text, tags: restatement.tags, sourceProvider: restatement.sourceProvider ?? undefined, sessionId: restatement.sessionId ?? undefined });
    return { ...restatement, tags: canonicalTags(restatement.tags) };
  });
}

const textOf = (item: Prepared): string => (item.kind === 'memory' ? item.memory.text : item.item.text);

/** Same text and same tags as a set: tags are stored normalised and de-duplicated, so sorted they compare. */
const memoryKey = (text: string, tags: readonly string[]): string => `m\u0000${text}\u0000${[...tags].sort().join('\u0000')}`;

const tombstoneKey = (text: string, reason: TombstoneReason, tombstonedAt: Date): string => `t\u0000${text}\u0000${reason}\u0000${tombstonedAt.getTime()}`;

/** The keys of `items` already stored for the subject, with the id each is stored under. */
async function storedKeys(trx: DbTransaction, subject: string, items: readonly Prepared[]): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const memoryTexts = items.filter((item) => item.kind === 'memory').map(textOf);
  for (const row of await memoriesWithTexts(trx, subject, memoryTexts)) found.set(memoryKey(row.text, row.tags), row.id);
  const tombstoneTexts = items.filter((item) => item.kind === 'tombstone').map(textOf);
  for (const row of await tombstonesWithTexts(trx, subject, tombstoneTexts)) found.set(tombstoneKey(row.text, row.reason, row.tombstonedAt), row.memoryId);
  return found;
}

/**
 * For each memory item of `items` already stored (`stored` maps its key to its id), the file's restatements that
 * the stored memory lacks (by text), if any.
 */
async function lackingRestatements(
  trx: DbTransaction,
  subject: string,
  items: readonly Prepared[],
  stored: ReadonlyMap<string, number>,
): Promise<{ memoryId: number; restatements: Restatement[] }[]> {
  const candidates = items.flatMap((item) => {
    const memoryId = stored.get(item.key);
    return item.kind === 'memory' && item.restatements.length > 0 && memoryId !== undefined ? [{ memoryId, item }] : [];
  });
  if (candidates.length === 0) return [];
  const existing = await restatementsOf(trx, subject, candidates.map(({ memoryId }) => memoryId));
  return candidates.flatMap(({ memoryId, item }) => {
    const known = new Set((existing.get(memoryId) ?? []).map((restatement) => restatement.text));
    const missing = item.restatements.filter((restatement) => !known.has(restatement.text));
    return missing.length === 0 ? [] : [{ memoryId, restatements: missing }];
  });
}

/**
 * The id here of a former id; one not met yet (a replacement further down the file) is given a new id now, kept
 * in `reserved` for the tombstone that may carry it.
 */
async function mappedId(trx: DbTransaction, ids: Map<number, number>, reserved: Set<number>, former: number): Promise<number> {
  let id = ids.get(former);
  if (id === undefined) {
    ids.set(former, (id = await allocateMemoryId(trx)));
    reserved.add(id);
  }
  return id;
}

/** A tombstone's vector fields, as a removed memory's read back (pgvector's text form). */
function vectorFields(vector: StoredVector) {
  return { embedding: toVectorLiteral(vector.values), embeddingModel: vector.model, embeddingDimensions: vector.dimensions };
}
