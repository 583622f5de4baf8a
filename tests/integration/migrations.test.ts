import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { env } from "@/lib/env";
import { startEmbeddedDatabase } from "../../scripts/embedded-db";

const exec = promisify(execFile);

describe("migrations", () => {
  it("build exactly the schema in prisma/schema.prisma (no drift), through the offline JS schema engine", async () => {
    // A real server gets a shadow database beside the test database; PGlite serves a single database,
    // so the embedded run diffs against an empty instance of its own.
    // eslint-disable-next-line no-restricted-properties -- set by the test setup when the suite runs on the embedded database
    const embedded = process.env.SVC_TEST_EMBEDDED_DB === "1" ? await startEmbeddedDatabase() : undefined;
    const url = embedded?.url ?? env.DATABASE_URL;
    const { stdout } = await exec(
      process.execPath,
      [
        "node_modules/prisma/build/index.js",
        "migrate",
        "diff",
        "--from-migrations",
        "prisma/migrations",
        "--to-schema-datamodel",
        "prisma/schema.prisma",
        "--exit-code",
      ],
      // eslint-disable-next-line no-restricted-properties -- the Prisma CLI inherits the test run's configuration
      { env: { ...process.env, DATABASE_URL: url, CHECKPOINT_DISABLE: "1" }, timeout: 60_000 },
    ).finally(() => embedded?.stop());
    expect(stdout).toContain("No difference detected");
  });
});
