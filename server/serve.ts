/**
 * `npm run serve`: production in one command. Checks the configuration (with SVC_ENV=production it refuses the
 * public dev keys and missing secrets, listing every problem at once), applies pending migrations, seeds the
 * default catalog (catalog/default.json) when the catalog is empty, then serves the production build (`npm run
 * build` first) through server/main.ts, which drains gracefully on SIGTERM.
 * Usage: npm run serve -- [--port 3000] [--hostname 0.0.0.0]
 */
import { parseArgs } from "node:util";

async function main() {
  const { values } = parseArgs({ options: { port: { type: "string", default: "3000" }, hostname: { type: "string" } } });

  let env: typeof import("../lib/env");
  try {
    env = await import("../lib/env");
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    console.error("svc not started: fix the configuration above (README, Configuration and Production).");
    process.exit(1);
  }
  const url = env.requireDatabaseUrl();

  const { migrateDatabase } = await import("./migrate");
  console.log("applying pending migrations");
  await migrateDatabase(url);

  const [{ db }, { seedCatalogWhenEmpty }] = await Promise.all([import("../lib/db/client"), import("../lib/market/catalog-store")]);
  const seeded = await seedCatalogWhenEmpty(db);
  console.log(seeded ? `catalog was empty: seeded ${seeded} models from catalog/default.json` : "catalog present");

  const { startServer } = await import("./main");
  await startServer({ port: values.port, hostname: values.hostname });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
