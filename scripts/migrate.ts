import { run } from "./process-utils";

/** Applies the committed migrations (`prisma migrate deploy`) to the database at `url`. */
export async function migrateDatabase(url: string): Promise<void> {
  await run(process.execPath, ["node_modules/prisma/build/index.js", "migrate", "deploy"], {
    ...process.env,
    DATABASE_URL: url,
    CHECKPOINT_DISABLE: "1",
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
  });
}

/** Drops and recreates the public schema. Refuses anything but a database whose name says it is for tests or benchmarks. */
export async function resetTestDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  if (!/test|bench/i.test(name)) {
    throw new Error(`Refusing to wipe database "${name}": test and benchmark databases must have "test" or "bench" in their name.`);
  }
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;");
  } finally {
    await client.end();
  }
}
