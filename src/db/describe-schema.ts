import { sql, type Kysely } from 'kysely';

/** pg_attribute.attstorage codes, shown only where a column differs from its type's default. */
const STORAGE: Record<string, string> = { p: 'plain', e: 'external', m: 'main', x: 'extended' };

/** reloptions come back as a text[], which node-postgres and PGlite may hand over as its literal. */
function parseOptions(options: string[] | string): string[] {
  return (Array.isArray(options) ? options : options.replace(/^\{|\}$/g, '').split(',')).sort();
}

/**
 * A stable, engine-independent text description of the tables in one schema (columns, constraints,
 * indexes, triggers, row-level security policies), committed as db/schema.sql so every DDL change shows in review.
 */
export async function describeSchema(db: Kysely<unknown>, schema: string): Promise<string> {
  // PostgreSQL qualifies names outside the search path; the dump must not depend on the schema's name.
  const unqualified = (definition: string) => definition.replaceAll(`${schema}.`, '');
  const tables = await sql<{ table_name: string; rls: boolean; force_rls: boolean; options: string[] | null }>`
    select c.relname as table_name, c.relrowsecurity as rls, c.relforcerowsecurity as force_rls, c.reloptions as options
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = ${schema} and c.relkind = 'r' and c.relname not like 'kysely_%'
     order by c.relname`.execute(db);
  const out: string[] = [];
  for (const table of tables.rows) {
    const columns = await sql<{ name: string; type: string; not_null: boolean; default_value: string | null; generated: string; storage: string | null }>`
      select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as not_null,
             pg_get_expr(d.adbin, d.adrelid) as default_value, a.attgenerated::text as generated,
             a.attidentity::text as identity,
             case when a.attstorage <> t.typstorage then a.attstorage::text end as storage
        from pg_attribute a
        join pg_type t on t.oid = a.atttypid
        join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
        left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
       where n.nspname = ${schema} and c.relname = ${table.table_name} and a.attnum > 0 and not a.attisdropped
       order by a.attnum`.execute(db);
    out.push(`create table ${table.table_name} (`);
    out.push(
      columns.rows
        .map((column) => {
          const row = column as typeof column & { identity: string };
          const parts = [`  ${column.name} ${column.type}`];
          if (row.identity === 'a') parts.push('generated always as identity');
          else if (column.generated === 's') parts.push(`generated always as (${column.default_value}) stored`);
          else if (column.default_value !== null) parts.push(`default ${column.default_value}`);
          if (column.not_null) parts.push('not null');
          if (column.storage !== null) parts.push(`storage ${STORAGE[column.storage] ?? column.storage}`);
          return parts.join(' ');
        })
        .join(',\n'),
    );
    out.push(table.options === null ? ');' : `) with (${parseOptions(table.options).join(', ')});`);
    const constraints = await sql<{ name: string; definition: string }>`
      select con.conname as name, pg_get_constraintdef(con.oid) as definition
        from pg_constraint con join pg_class c on c.oid = con.conrelid join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = ${schema} and c.relname = ${table.table_name} and con.contype <> 'n'
       order by con.conname`.execute(db);
    for (const constraint of constraints.rows) out.push(`  constraint ${constraint.name} ${unqualified(constraint.definition)};`);
    const indexes = await sql<{ name: string; definition: string }>`
      select indexname as name, indexdef as definition from pg_indexes
       where schemaname = ${schema} and tablename = ${table.table_name} order by indexname`.execute(db);
    for (const index of indexes.rows) out.push(`  ${unqualified(index.definition).replace(/ ON ONLY /, ' ON ')};`);
    const triggers = await sql<{ definition: string }>`
      select pg_get_triggerdef(t.oid) as definition
        from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = ${schema} and c.relname = ${table.table_name} and not t.tgisinternal
       order by t.tgname`.execute(db);
    for (const trigger of triggers.rows) out.push(`  ${unqualified(trigger.definition)};`);
    if (table.rls) out.push(`  row level security enabled${table.force_rls ? ', forced' : ''};`);
    const policies = await sql<{ name: string; command: string; using_expr: string | null; check_expr: string | null }>`
      select policyname as name, cmd as command, qual as using_expr, with_check as check_expr from pg_policies
       where schemaname = ${schema} and tablename = ${table.table_name} order by policyname`.execute(db);
    for (const policy of policies.rows) {
      out.push(unqualified(`  policy ${policy.name} for ${policy.command.toLowerCase()} using (${policy.using_expr}) with check (${policy.check_expr});`));
    }
    out.push('');
  }
  return `-- Generated by \`npm run schema:dump\` from the migrated schema; a test fails when it drifts.\n\n${out.join('\n')}`;
}
