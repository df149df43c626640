import type { DatabaseHandle } from '../db/open-database.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';
import { databaseError, isServiceError, secretRejected } from '../errors.js';
import {
  findNearMemories,
  findNearTombstones,
  insertMemory,
  lockSubjectForWrite,
  type StoredVector,
} from './repository.js';
import { sameFact } from './same-fact.js';
import { looksLikeSecret } from './secrets.js';
import type { DedupPolicy, NewMemory, RememberOutcome } from './types.js';
import { toVectorLiteral } from './vector.js';

export interface MemoryServiceOptions {
  readonly db: DatabaseHandle;
  readonly embedder: EmbeddingProvider;
  readonly nearDuplicateThreshold: number;
  /** Told about database failures (the cause), so the caller can log them; never given memory text. */
  readonly onDatabaseError?: (error: unknown) => void;
}

const NEAR_LIMIT = 5;

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
      const near = policy === 'insert' ? [] : await findNearMemories(trx, subject, vector, threshold, NEAR_LIMIT);
      if (policy === 'skip_if_near') {
        const same = near.find((candidate) => sameFact(candidate.text, memory.text));
        if (same !== undefined) {
          return { ok: true, memory_id: same.memory_id, message: 'Already remembered', near_duplicates: near };
        }
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
