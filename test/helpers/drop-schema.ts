import pg from 'pg';

/** Drops a PostgreSQL schema and everything in it, on a connection of its own that is ended whatever happens. */
export async function dropSchema(schema: string, url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}
