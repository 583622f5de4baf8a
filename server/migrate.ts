/**
 * The deploy's database step, for `npm run db:deploy`, `npm run serve` and every test, bench and dev stack: the
 * committed migrations, then the SQL functions of prisma/functions/ (server/sql-functions.ts).
 */
import { execFile } from "node:child_process";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { installFunctions } from "./sql-functions";

/**
 * Applies the committed migrations (`prisma migrate deploy`) to the database at `url`, then installs the SQL
 * functions from prisma/functions/ (server/sql-functions.ts).
 */
export async function migrateDatabase(url: string): Promise<void> {
  // A failure rejects with the CLI's output in the error's message.
  await promisify(execFile)(process.execPath, ["node_modules/prisma/build/index.js", "migrate", "deploy"], {
    env: {
      // eslint-disable-next-line no-restricted-properties -- the Prisma CLI inherits the configuration
      ...process.env,
      DATABASE_URL: url,
      CHECKPOINT_DISABLE: "1",
      PRISMA_HIDE_UPDATE_MESSAGE: "1",
    },
  });
  await installFunctions(url);
}

// `tsx server/migrate.ts` (npm run db:deploy): migrates the database DATABASE_URL names.
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
