import { sql, type RawBuilder } from 'kysely';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { memoryConditions, type SpaceKeys, inSpaces } from './filters.js';
import type { MemoryFilters } from './records.js';

/**
 * A query word found in this many of the subject's memories or more is too common to pick candidates: it still
 * adds to the score of memories found through rarer words, but finds none by itself. This bounds the scoring
 * (about this many rows per query word) for a subject with very many memories; below this many nothing changes.
 */
const COMMON_TERM_ROWS = 1000;
/**
 * ts_rank of one word in a memory stays below this (0.1, the weight of an unweighted position, times a sum over
 * its positions bounded by π²/6, which ts_rank divides by): the most a common word can add is its idf times this.
 */
const MAX_TERM_RANK = 0.1;
/** Slack for the partial sums' rounding (they add in another order than the final score). */
const SCORE_MARGIN = 1e-9;

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

/**
 * The subject's live memories that pass the filters and share a word stem with `query`, best first.
 *
 * Every stem of the query is an alternative (OR), so a question need not repeat a memory's wording; each
 * matching stem counts by its term frequency (ts_rank) weighted by its inverse document frequency among the
 * subject's memories (BM25's idf, with `subjectMemories` as the document count), so a rare name or number
 * outweighs a word that every memory contains.
 *
 * Everything is read from memory_terms (migrations 0004 and 0009), whose B-tree PostgreSQL can use under
 * row-level security, unlike the GIN index for `@@`: each stem's memories and their count (its idf), and each
 * match's ts_rank, stored by the trigger and carried in the index, so candidates are scored without reading
 * their rows. Only then are memories read, best first, to keep those that pass the filters, until `depth` are
 * found: a question whose words occur in hundreds of a large subject's memories reads about `depth` of them.
 */
export async function textRanking(
  trx: DbTransaction,
  spaces: SpaceKeys,
  filters: MemoryFilters,
  query: string,
  depth: number,
  subjectMemories: number,
): Promise<TextHit[]> {
  const { rows } = await prepared(textRankingQuery(spaces, filters, query, depth, subjectMemories)).execute(trx);
  return rows.map(toTextHit);
}

/** A row of textRankingQuery. */
export interface TextHitRow {
  id: string | number;
  score: number;
  coverage: number | null;
}

export function toTextHit(row: TextHitRow): TextHit {
  return { id: Number(row.id), score: Number(row.score), coverage: Number(row.coverage ?? 0) };
}

/** textRankingQuery's statement, to run along with another (readFirstResults). */
export type TextRankingStatement = RawBuilder<TextHitRow>;

/** textRanking's order, over textRankingQuery's columns. */
export const TEXT_RANKING_ORDER = sql`score desc, id desc`;

/** textRanking's statement, for one that runs it along with something else (walkIndexWith). */
export function textRankingQuery(spaces: SpaceKeys, filters: MemoryFilters, query: string, depth: number, subjectMemories: number): RawBuilder<TextHitRow> {
  // Sums run in the query's lexeme order (tsvector_to_array's), so a score is the same number whichever way its
  // rows were found; ties fall to the newer memory. Lexemes are quoted into tsquery's input syntax, so
  // punctuation in identifiers cannot be read as operators.
  return sql<TextHitRow>`
    with counted as materialized (
      select position, lexeme,
             (select count(*) from (select 1 from memory_terms
                                     where ${inSpaces('memory_terms.subject', spaces)} and memory_terms.lexeme = words.lexeme
                                     limit ${COMMON_TERM_ROWS}) as capped)::float8 as df
        from unnest(tsvector_to_array(to_tsvector('english', ${query}))) with ordinality as words (lexeme, position)),
    weights as materialized (
      select position, lexeme, df, ln(1 + (greatest(${subjectMemories}::float8, df) - df + 0.5) / (df + 0.5)) as idf,
             ('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery as query
        from counted),
    found as materialized (
      select memory_terms.memory_id as id, weights.position, weights.idf, memory_terms.rank
        from weights
        join memory_terms on ${inSpaces('memory_terms.subject', spaces)} and memory_terms.lexeme = weights.lexeme
       where weights.df < ${COMMON_TERM_ROWS}),
    -- Summed in the query's word order, as the final score is: the rows reach each group sorted by position
    -- (an aggregate's own ORDER BY sorts every group apart: most of this query's time for a large subject).
    partial as materialized (
      select id, sum(idf * rank) as score, sum(idf) as matched
        from (select id, position, idf, rank from found order by id, position) as ordered
       group by id),
    -- The best candidates that pass the filters by their rare words alone: the last of them sets the bar.
    passing as materialized (
      select ranked.id, ranked.score, ranked.matched
        from (select id, score, matched from partial order by score desc, id desc) as ranked
        cross join lateral (select 1 from memories where memories.id = ranked.id and ${memoryConditions(spaces, filters)} limit 1) as live
       order by ranked.score desc, ranked.id desc
       limit ${depth}),
    -- The most that common words can add to a candidate's score.
    bound as materialized (
      select coalesce(sum(idf), 0) * ${MAX_TERM_RANK} as common from weights where df >= ${COMMON_TERM_ROWS}),
    total as materialized (
      select sum(idf order by position) as idf from weights),
    -- With common words, a candidate whose rare words leave it further below the bar than they could make up
    -- cannot reach the top, and is never read.
    contenders as materialized (
      select id from partial
       where (select common from bound) > 0
         and ((select count(*) from passing) < ${depth}
              or score + (select common from bound) >= (select min(score) from passing) - ${SCORE_MARGIN})),
    -- Each contender's row, read once: the filters, and the common words it contains.
    live as materialized (
      select contenders.id, row.search_vector
        from contenders
        cross join lateral (select search_vector from memories
                             where memories.id = contenders.id and ${memoryConditions(spaces, filters)} limit 1) as row),
    matches as (
      select found.id, found.position, found.idf, found.rank from found join live on live.id = found.id
      union all
      select live.id, weights.position, weights.idf, ts_rank(live.search_vector, weights.query)
        from live join weights on weights.df >= ${COMMON_TERM_ROWS} and live.search_vector @@ weights.query)
    -- Without common words the best passing candidates are the answer, scored as they were found.
    select id, score, matched / nullif((select idf from total), 0) as coverage
      from passing
     where (select common from bound) = 0
    union all
    select id, sum(idf * rank order by position) as score, sum(idf order by position) / nullif((select idf from total), 0) as coverage
      from matches
     group by id
     order by ${TEXT_RANKING_ORDER}
     limit ${depth}`;
}

/**
 * Those of `words` that none of the subject's memories uses (compared as full-text lexemes, so "herbs" uses "herb"),
 * in their order, as a JSON array of text; a word PostgreSQL's stemmer drops (a stop word) is not in it. Each lexeme
 * is looked up by the primary key. An expression: it rides in a statement recall sends anyway (sizeForVectorRanking).
 */
export function unusedWordsExpression(spaces: SpaceKeys, words: readonly string[]): RawBuilder<string[]> {
  return sql<string[]>`(select coalesce(json_agg(asked.word order by asked.position), '[]')
      from unnest(${[...words]}::text[]) with ordinality as asked(word, position)
     where exists (select 1 from ${stemsOfAskedWord} where not ${lexemeUsed(spaces)}))`;
}

/** The stems (full-text lexemes) of `asked.word`, as rows of `stem(lexeme)`. */
const stemsOfAskedWord = sql`unnest(tsvector_to_array(to_tsvector('english', asked.word))) as stem(lexeme)`;

/** Whether some memory of `spaces` contains `stem.lexeme` (memory_terms' primary key). */
const lexemeUsed = (spaces: SpaceKeys): RawBuilder<boolean> => sql<boolean>`exists (select 1 from memory_terms where ${inSpaces('subject', spaces)} and lexeme = stem.lexeme)`;

/**
 * Whether any of the subject's memories contains a stem of `words` (memory_terms' index alone); an expression, as
 * above. A hyphenated word counts by its whole ("father-in-law"), not by its parts ("father", "law").
 */
export function usesTermsExpression(spaces: SpaceKeys, words: readonly string[]): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1
                                from unnest(${[...words]}::text[]) as asked(word)
                                cross join lateral ${stemsOfAskedWord}
                               where (position('-' in asked.word) = 0 or position('-' in stem.lexeme) > 0) and ${lexemeUsed(spaces)})`;
}

/** What recall asks of the subject's words before ranking (QuestionWordLookups), answered by one expression. */
export interface QuestionWordLookups {
  /** The question's words that none of the subject's memories uses (unusedWordsExpression). */
  readonly unused: string[];
  /** Whether some memory uses one of the question's person words (usesTermsExpression); false when none is asked. */
  readonly usesPersonWords: boolean;
  /** The other words for the question's words (a title's, a kinship word's) that none of the memories uses. */
  readonly unusedAlternatives: string[];
}

/**
 * unusedWordsExpression of `words` and of `alternatives`, and usesTermsExpression of `personWords`, as one JSON
 * object (QuestionWordLookups).
 */
export function questionWordLookups(spaces: SpaceKeys, words: readonly string[], personWords: readonly string[], alternatives: readonly string[] = []): RawBuilder<QuestionWordLookups> {
  const uses = personWords.length === 0 ? sql<boolean>`false` : usesTermsExpression(spaces, personWords);
  const unused = (asked: readonly string[]) => (asked.length === 0 ? sql`'[]'::json` : unusedWordsExpression(spaces, asked));
  return sql<QuestionWordLookups>`json_build_object('unused', ${unused(words)}, 'usesPersonWords', ${uses}, 'unusedAlternatives', ${unused(alternatives)})`;
}
