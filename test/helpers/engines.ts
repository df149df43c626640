/** Every database suite runs on PGlite, and again on PostgreSQL when TEST_DATABASE_URL is set. */
export type Engine = 'pglite' | 'postgres';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL?.trim() || undefined;

export const engines: Engine[] = TEST_DATABASE_URL === undefined ? ['pglite'] : ['pglite', 'postgres'];

export function uniqueSchema(): string {
  return `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}
