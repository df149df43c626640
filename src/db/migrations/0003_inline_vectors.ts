import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * Keep vectors in the table row rather than in TOAST. A 512-dimension vector (2 KB) is just over the default
 * 2 KB threshold, so every row read by an exact vector scan cost an extra TOAST lookup (measured: 3.4x slower
 * on 5,000 rows). MAIN keeps a vector inline unless the row cannot fit a page any other way (very large
 * models still work), and a higher toast_tuple_target lets such rows stay whole. Applies to rows written from
 * now on; older rows move inline when rewritten (reembed, VACUUM FULL).
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['memories', 'tombstones']) {
    await sql`alter table ${sql.table(table)} alter column embedding set storage main`.execute(db);
    await sql`alter table ${sql.table(table)} set (toast_tuple_target = 8160)`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['memories', 'tombstones']) {
    await sql`alter table ${sql.table(table)} alter column embedding set storage extended`.execute(db);
    await sql`alter table ${sql.table(table)} reset (toast_tuple_target)`.execute(db);
  }
}
