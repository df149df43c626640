import { lockSubjectForWrite } from './memories/write-lock.js';
import type { DbTransaction } from './schema.js';
import { deleteSpaceRow } from './spaces.js';

/** How many rows of each kind went (memory_terms rows go with their memories). */
export interface ErasedRows {
  readonly memories: number;
  readonly restatements: number;
  readonly tombstones: number;
  readonly webSessions: number;
}

/**
 * Deletes everything the database holds of one subject: memories (their memory_terms, memory_terms_pending and
 * memory_recalls rows by trigger), their restatements, tombstones (with the restatements they keep), the
 * subject_stats row (eraseSpace), and web sessions. Every table with a subject column is listed there or here;
 * run it in the subject's own transaction, so it is all or nothing.
 */
export async function eraseSubject(trx: DbTransaction, subject: string): Promise<ErasedRows> {
  const erased = await eraseSpace(trx, subject);
  const webSessions = await trx.deleteFrom('web_sessions').where('subject', '=', subject).executeTakeFirst();
  return { ...erased, webSessions: Number(webSessions.numDeletedRows) };
}

/**
 * Deletes a shared space whole, under its write lock: everything it holds (eraseSpace), then its row in `spaces`
 * (its members go with it). Undefined when the transaction found no such space to delete.
 */
export async function eraseSharedSpace(trx: DbTransaction, key: string): Promise<ErasedRows | undefined> {
  await lockSubjectForWrite(trx, key);
  const erased = await eraseSpace(trx, key);
  return (await deleteSpaceRow(trx, key)) ? erased : undefined;
}

/**
 * Deletes everything one space holds (its key: a subject's personal space, or a shared space's `space:<id>`):
 * memories with their index rows, restatements, tombstones and its counts. The `spaces` row, if any, is the
 * caller's to delete.
 */
export async function eraseSpace(trx: DbTransaction, subject: string): Promise<ErasedRows> {
  // First, so the per-row counting trigger of the memories' delete finds no row to update.
  await trx.deleteFrom('subject_stats').where('subject', '=', subject).execute();
  // Before their memories, to count them (the foreign key's cascade would take them too).
  const restatements = await trx.deleteFrom('memory_restatements').where('subject', '=', subject).executeTakeFirst();
  const memories = await trx.deleteFrom('memories').where('subject', '=', subject).executeTakeFirst();
  // None should be left (they go with their memory); deleted by subject all the same, since this is the promise.
  await trx.deleteFrom('memory_terms').where('subject', '=', subject).execute();
  await trx.deleteFrom('memory_terms_pending').where('subject', '=', subject).execute();
  await trx.deleteFrom('memory_recalls').where('subject', '=', subject).execute();
  const tombstones = await trx.deleteFrom('tombstones').where('subject', '=', subject).executeTakeFirst();
  return {
    memories: Number(memories.numDeletedRows),
    restatements: Number(restatements.numDeletedRows),
    tombstones: Number(tombstones.numDeletedRows),
    webSessions: 0,
  };
}
