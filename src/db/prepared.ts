import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';

/**
 * Statements every recall or remember sends are prepared once per PostgreSQL connection: the server then parses
 * and analyses them once, and may keep their plan (the index walk asks for that: see walkSettings). A statement
 * is marked by a leading comment; the driver (guardedPool) names it after its text. A marked statement's
 * variable parts are parameters and its text varies only with a few options (which filters are set), so a
 * connection holds a bounded number of them. PGlite's driver sends every statement unnamed, and reads the mark
 * as the comment it is.
 */
const MARK = '/* prepared */';

export function prepared<T>(statement: RawBuilder<T>): RawBuilder<T> {
  return sql<T>`/* prepared */ ${statement}`;
}

/** Names by text: as bounded as the marked texts themselves. */
const names = new Map<string, string>();

/** The server-side name of a marked statement; undefined for any other. */
export function preparedName(text: string): string | undefined {
  if (!text.startsWith(MARK)) return undefined;
  let name = names.get(text);
  if (name === undefined) {
    name = `memory_service_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    names.set(text, name);
  }
  return name;
}
