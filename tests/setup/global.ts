/**
 * Once per test run: a database (DATABASE_URL if set, else a throwaway embedded PGlite), migrated from
 * scratch, the catalog seeded, a treasury and relayer of the run's own, and a fresh local chain funding them.
 * Workers inherit the resulting environment.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { loadOrCreateDevKeys } from "../../lib/chain/dev-keys";
import { startEmbeddedDatabase } from "../../scripts/embedded-db";
import { startLocalChain } from "../../scripts/local-chain";
import { migrateDatabase } from "../../server/migrate";
import { resetTestDatabase } from "../../scripts/migrate";

/**
 * A PostgreSQL server's default zone is its machine's, which need not be UTC: the suite's database defaults to a
 * zone off UTC by a fraction of an hour, so a statement that leans on the session's zone (a zone-less JS Date
 * read as local time, a day cut at local midnight) fails here and not on someone's server. The app pins its own
 * sessions to UTC (lib/db/pools.ts); the embedded database is on GMT, and is one session behind every connection:
 * a test that wants another zone there sets it for its own transaction only (SET LOCAL), or every file running
 * beside it moves too (tests/integration/key-period-rules.test.ts).
 */
const TEST_DATABASE_TIME_ZONE = "Asia/Kathmandu";

async function setDefaultTimeZone(url: string, zone: string): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`ALTER DATABASE "${new URL(url).pathname.slice(1).replaceAll('"', '""')}" SET timezone = '${zone}'`);
  } finally {
    await client.end();
  }
}

export default async function setup(_project: TestProject) {
  const stops: (() => Promise<void>)[] = [];
  // eslint-disable-next-line no-restricted-properties -- the test runner hands configuration to workers
  const env = process.env;

  let databaseUrl = env.DATABASE_URL;
  if (databaseUrl) {
    await resetTestDatabase(databaseUrl);
    await setDefaultTimeZone(databaseUrl, TEST_DATABASE_TIME_ZONE);
  } else {
    const embedded = await startEmbeddedDatabase();
    stops.push(embedded.stop);
    databaseUrl = embedded.url;
    env.SVC_TEST_EMBEDDED_DB = "1";
  }
  await migrateDatabase(databaseUrl);

  // The run's platform keys, generated as `npm run dev` generates an install's (lib/env.ts reads this file, since the
  // suite sets neither TREASURY_ADDRESS nor RELAYER_PRIVATE_KEY); gone with the run.
  const keysDir = mkdtempSync(path.join(tmpdir(), "svc-test-keys-"));
  stops.push(async () => rmSync(keysDir, { recursive: true, force: true }));
  const keysFile = path.join(keysDir, "dev-keys.json");
  const keys = loadOrCreateDevKeys(keysFile);
  const chain = await startLocalChain({ platform: { treasury: keys.treasury.address, relayer: keys.relayer.address } });
  stops.push(chain.stop);

  delete env.TREASURY_ADDRESS;
  delete env.RELAYER_PRIVATE_KEY;
  Object.assign(env, {
    DATABASE_URL: databaseUrl,
    BASE_RPC_URL: chain.rpcUrl,
    SVC_DEV_KEYS_FILE: keysFile,
    SVC_ENV: "test",
    ALLOW_PRIVATE_UPSTREAMS: "true",
    // The failure tests log errors on purpose; set LOG_LEVEL=debug to see them.
    LOG_LEVEL: env.LOG_LEVEL ?? "silent",
    // Short enough that the upstream-timeout tests finish quickly, long enough for 200 parallel reservations.
    UPSTREAM_TIMEOUT_MS: "6000",
    // Above the streaming tests' 12-second first token, below a test's timeout.
    STREAM_IDLE_TIMEOUT_MS: "20000",
    // A stalled reader's test waits this long; a client that reads never fills svc's buffer (the kernel's hold MiBs).
    STREAM_STALL_MS: "3000",
    // A probe round's random waits between probes (not a burst in production) would only slow the tests down.
    PROBE_SPREAD_MS: "0",
    PROBE_PROBATION_SPREAD_MS: "0",
    // Offers posted by other files' tests serve at once, as they expect; tests/integration/probes.test.ts turns it on.
    PROBE_PROBATION: "false",
    // GET /metrics is served to this bearer token only (tests/integration/metrics.test.ts).
    METRICS_TOKEN: env.METRICS_TOKEN ?? "test-metrics-token-0123456789",
    // Every test request comes from one "IP", and a test's account may write often; the rate-limit tests set their own limits.
    RATE_LIMIT_PER_IP_PER_MINUTE: "1000000",
    RATE_LIMIT_WRITES_PER_IP_PER_MINUTE: "1000000",
    RATE_LIMIT_WRITES_PER_ACCOUNT_PER_MINUTE: "1000000",
    RATE_LIMIT_AUTH_FAILURES_PER_IP_PER_MINUTE: "1000000",
  });

  const [{ PrismaClient }, { PrismaPg }, { seedCatalog }] = await Promise.all([
    import("@prisma/client"),
    import("@prisma/adapter-pg"),
    import("../../prisma/seed"),
  ]);
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  await seedCatalog(prisma);
  await prisma.$disconnect();

  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}
