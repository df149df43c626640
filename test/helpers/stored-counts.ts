/**
 * How many subjects' subject_stats counts disagree with their rows in `schema` (all memories, those in a
 * conversation, restatements, and the bytes of memories' and restatements' texts): the fault tests' check that each count was written in its memory's
 * transaction. One row, column n.
 */
export function subjectCountMismatchesSql(schema: string): string {
  return `select count(*)::int as n from "${schema}".subject_stats s
           where s.memories <> (select count(*) from "${schema}".memories m where m.subject = s.subject)
              or s.in_conversations <> (select count(*) from "${schema}".memories m where m.subject = s.subject and m.session_id is not null)
              or s.restatements <> (select count(*) from "${schema}".memory_restatements r where r.subject = s.subject)
              or s.text_bytes <> (select coalesce(sum(octet_length(m.text)), 0) from "${schema}".memories m where m.subject = s.subject)
                                + (select coalesce(sum(octet_length(r.text)), 0) from "${schema}".memory_restatements r where r.subject = s.subject)`;
}
