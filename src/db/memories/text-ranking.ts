import { sql } from 'kysely';
import type { DbTransaction } from '../schema.js';
import { memoryConditions } from './filters.js';
import type { MemoryFilters } from './records.js';

/**
 * A query word found in this many of the subject's memories or more is too common to pick candidates: it still
 * adds to the score of memories found through rarer words, but finds none by itself. This bounds the scoring
 * (about this many rows per query word) for a subject with very many memories; below this many nothing changes.
 */
const COMMON_TERM_ROWS = 1000;

/**
 * The subject's live memories that pass the filters and share a word stem with `query`, best first.
 *
 * Every stem of the query is an alternative (OR), so a question need not repeat a memory's wording; each
 * matching stem counts by its term frequency (ts_rank) weighted by its inverse document frequency among the
 * subject's memories (BM25's idf, with `subjectMemories` as the document count), so a rare name or number
 * outweighs a word that every memory contains.
 *
 * Stems are looked up in memory_terms (migration 0004), whose B-tree PostgreSQL can use under row-level
 * security, unlike the GIN index for `@@`; the candidates are then read by primary key, filtered and scored.
 */
/** A memory found by the full-text ranking. */
export interface TextHit {
  readonly id: number;
  /** Sum over the query's stems it contains of idf × ts_rank. */
  readonly score: number;
  /**
   * The share of the query's idf mass that it contains (0–1): the idf of its matching stems over the idf of all
   * the query's stems, those found in none of the subject's memories counting at the highest idf. One ordinary
   * word of a longer question covers little; every rare word of the question covers nearly all.
   */
  readonly coverage: number;
}

export async function textRanking(
  trx: DbTransaction,
  subject: string,
  filters: MemoryFilters,
  query: string,
  depth: number,
  subjectMemories: number,
): Promise<TextHit[]> {
  // Lexemes are quoted into tsquery's input syntax, so punctuation in identifiers cannot be read as operators.
  const { rows } = await sql<{ id: string | number; score: number; coverage: number | null }>`
    with terms as materialized (
      select lexeme,
             ('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery as query
        from unnest(tsvector_to_array(to_tsvector('english', ${query}))) as lexeme),
    frequencies as materialized (
      select terms.lexeme, terms.query,
             (select count(*) from (select 1 from memory_terms
                                     where memory_terms.subject = ${subject} and memory_terms.lexeme = terms.lexeme
                                     limit ${COMMON_TERM_ROWS}) as capped)::float8 as df
        from terms),
    weights as materialized (
      select query, df, ln(1 + (greatest(${subjectMemories}::float8, df) - df + 0.5) / (df + 0.5)) as idf
        from frequencies),
    candidates as materialized (
      select distinct memory_terms.memory_id as id
        from frequencies
        join memory_terms on memory_terms.subject = ${subject} and memory_terms.lexeme = frequencies.lexeme
       where frequencies.df < ${COMMON_TERM_ROWS})
    select memories.id,
           (select sum(weights.idf * ts_rank(memories.search_vector, weights.query)) from weights where weights.df > 0) as score,
           (select sum(weights.idf) filter (where memories.search_vector @@ weights.query) / nullif(sum(weights.idf), 0)
              from weights) as coverage
      from candidates join memories on memories.id = candidates.id
     where ${memoryConditions(subject, filters)}
     order by score desc, memories.id desc
     limit ${depth}`.execute(trx);
  return rows.map((row) => ({ id: Number(row.id), score: Number(row.score), coverage: Number(row.coverage ?? 0) }));
}
