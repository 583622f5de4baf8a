/**
 * Test and benchmark databases: created when missing, wiped before a run (never one whose name does not say so).
 * Migrating them is the deploy's own step, server/migrate.ts.
 */

/** Drops and recreates the public schema (creating the database when it does not exist yet). Refuses anything but a database whose name says it is for tests or benchmarks. */
export async function resetTestDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  if (!/test|bench/i.test(name)) {
    throw new Error(`Refusing to wipe database "${name}": test and benchmark databases must have "test" or "bench" in their name.`);
  }
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    if ((error as { code?: string }).code !== "3D000") throw error; // anything but "database does not exist"
    await createDatabase(url, name);
    return;
  }
  try {
    await client.query("DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;");
  } finally {
    await client.end();
  }
}

/** Creates the database `name` through the server's `postgres` database (the server's default admin database). */
async function createDatabase(url: string, name: string): Promise<void> {
  const { default: pg } = await import("pg");
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
}
