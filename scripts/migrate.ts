import { pathToFileURL } from "node:url";
import { run } from "./process-utils";
import { installFunctions } from "./sql-functions";

/**
 * Applies the committed migrations (`prisma migrate deploy`) to the database at `url`, then installs the SQL
 * functions from prisma/functions/ (scripts/sql-functions.ts).
 */
export async function migrateDatabase(url: string): Promise<void> {
  await run(process.execPath, ["node_modules/prisma/build/index.js", "migrate", "deploy"], {
    // eslint-disable-next-line no-restricted-properties -- the Prisma CLI inherits the configuration
    ...process.env,
    DATABASE_URL: url,
    CHECKPOINT_DISABLE: "1",
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
  });
  await installFunctions(url);
}

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

// `tsx scripts/migrate.ts` (npm run db:deploy): migrates the database DATABASE_URL names.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // eslint-disable-next-line no-restricted-properties -- a CLI of its own, run before the app's configuration is read
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error("DATABASE_URL is not set: it names the database to migrate");
    process.exit(1);
  }
  migrateDatabase(url).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
