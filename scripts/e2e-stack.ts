/**
 * The stack `npm run test:e2e` runs against, brought up once per run (Playwright's webServer starts this):
 * a database (DATABASE_URL, wiped, when set, else a throwaway embedded PGlite), migrations, the local chain,
 * the reference upstream, the catalog and the demo supplier, then a PRODUCTION build of the app made with
 * the test wallet compiled in (SVC_TEST_WALLET=1) served by server/main.ts. SIGINT/SIGTERM stop everything.
 *
 * SVC_E2E_SKIP_BUILD=1 reuses the existing .next build (it must be a test-wallet build); SVC_E2E_DEV=1 serves
 * Next in dev mode instead, for working on the UI against the same stack (`SVC_E2E_REUSE=1 npm run test:e2e` then uses it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@prisma/client";
import { APP_ORIGIN, E2E_DEV_KEYS_FILE, E2E_PORTS, E2E_PLATFORM_FEE_BPS, E2E_WITHDRAWAL_MIN_USD } from "../e2e/fixtures/stack";
import { getDevAccount } from "../lib/chain/constants";
import { loadOrCreateDevKeys } from "../lib/chain/dev-keys";
import { seedCatalog, seedDemoSupplier } from "../prisma/seed";
import { startEmbeddedDatabase } from "./embedded-db";
import { startLocalChain } from "./local-chain";
import { migrateDatabase } from "../server/migrate";
import { resetTestDatabase } from "./migrate";
import { waitFor } from "./process-utils";
import { startReferenceUpstream } from "./reference-upstream/server";

type Stoppable = { name: string; stop: () => Promise<void> };
const started: Stoppable[] = [];
// eslint-disable-next-line no-restricted-properties -- orchestration script: hands configuration to the app it starts
const env = process.env;

function step(message: string) {
  console.log(`[e2e-stack] ${message}`);
}

async function main() {
  const t0 = performance.now();
  let databaseUrl = env.DATABASE_URL;
  if (databaseUrl) {
    await resetTestDatabase(databaseUrl);
    step(`database: ${new URL(databaseUrl).pathname.slice(1)} (from DATABASE_URL, wiped)`);
  } else {
    const db = await startEmbeddedDatabase({ port: E2E_PORTS.embeddedDb });
    started.push({ name: "embedded database", stop: db.stop });
    databaseUrl = db.url;
    step(`database: embedded PGlite (in memory) on 127.0.0.1:${db.port}`);
  }
  await migrateDatabase(databaseUrl);

  // This run's own treasury and relayer, as `npm run dev` generates an install's: a fresh pair each run, in a file the
  // specs read (e2e/fixtures/stack.ts) to check where the money went.
  rmSync(E2E_DEV_KEYS_FILE, { force: true });
  const keys = loadOrCreateDevKeys(E2E_DEV_KEYS_FILE);
  const chain = await startLocalChain({
    port: E2E_PORTS.chain,
    platform: { treasury: keys.treasury.address, relayer: keys.relayer.address },
  });
  started.push({ name: "local chain", stop: chain.stop });
  const upstream = await startReferenceUpstream({ port: E2E_PORTS.upstream });
  started.push({ name: "reference upstream", stop: upstream.stop });
  step(`chain ${chain.rpcUrl}, reference upstream (a stand-in, not a model) ${upstream.url}`);

  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  try {
    await seedCatalog(prisma);
    await seedDemoSupplier(prisma, {
      walletAddress: getDevAccount("demoSupplier").address,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
    });
  } finally {
    await prisma.$disconnect();
  }

  const appEnv: NodeJS.ProcessEnv = {
    ...env,
    DATABASE_URL: databaseUrl,
    BASE_RPC_URL: chain.rpcUrl,
    TREASURY_ADDRESS: keys.treasury.address,
    RELAYER_PRIVATE_KEY: keys.relayer.privateKey,
    SVC_DEV_KEYS_FILE: path.resolve(E2E_DEV_KEYS_FILE),
    SVC_ORIGIN: APP_ORIGIN,
    SVC_ENV: "test",
    ALLOW_PRIVATE_UPSTREAMS: "true",
    WITHDRAWAL_MIN_USD: E2E_WITHDRAWAL_MIN_USD,
    // Not the default 10%: the dashboard must show the fee the server is configured with (e2e/ui/supplier.spec.ts).
    PLATFORM_FEE_BPS: String(E2E_PLATFORM_FEE_BPS),
    LOG_LEVEL: env.LOG_LEVEL ?? "warn",
    // Specs post offers and buy on them at once: probation (a probe set before a new offer serves) would race them.
    PROBE_PROBATION: "false",
    // The specs' traffic comes from one agent account: a quality window from one source shows figures here (the rules
    // that keep figures from being bought are tested in tests/integration/quality-nobody-can-buy.test.ts) ...
    QUALITY_MIN_SOURCES: "1",
    // ... and one source counts at most 3 forwards per offer an hour (svc_quality_source_cap), so 3 make a window.
    QUALITY_MIN_REQUESTS: "3",
    // Every browser and API test comes from 127.0.0.1 and a few accounts: keep the per-IP and per-account limits out of the way.
    RATE_LIMIT_WRITES_PER_IP_PER_MINUTE: env.RATE_LIMIT_WRITES_PER_IP_PER_MINUTE ?? "100000",
    RATE_LIMIT_WRITES_PER_ACCOUNT_PER_MINUTE: env.RATE_LIMIT_WRITES_PER_ACCOUNT_PER_MINUTE ?? "100000",
    NEXT_TELEMETRY_DISABLED: "1",
    SVC_TEST_WALLET: "1",
  };
  const dev = env.SVC_E2E_DEV === "1";
  if (!dev && env.SVC_E2E_SKIP_BUILD !== "1") {
    step("next build (test wallet compiled in)…");
    await runNext(["build"], appEnv);
  }
  // The app's own server (server/main.ts: Next behind the front door), on the test build or in dev mode.
  const app = spawn(
    process.execPath,
    [
      "node_modules/tsx/dist/cli.mjs",
      "--import",
      "./server/server-modules.mjs",
      "server/main.ts",
      ...(dev ? ["--dev"] : []),
      "--port",
      String(E2E_PORTS.app),
      "--hostname",
      "127.0.0.1",
    ],
    { env: appEnv, stdio: ["ignore", "inherit", "inherit"] },
  );
  started.push({ name: "app server", stop: () => stopChild(app) });
  app.once("exit", (code) => {
    if (!stopping) {
      console.error(`[e2e-stack] the app server exited (${code})`);
      void shutdown(1);
    }
  });
  await waitFor(
    "the app to answer /healthz",
    180_000,
    async () => (await fetch(`${APP_ORIGIN}/healthz`).catch(() => null))?.status === 200,
  );
  step(`ready at ${APP_ORIGIN} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

function spawnNext(args: string[], childEnv: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ["node_modules/next/dist/bin/next", ...args], { env: childEnv, stdio: ["ignore", "inherit", "inherit"] });
}

function runNext(args: string[], childEnv: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawnNext(args, childEnv);
    started.push({ name: `next ${args[0]}`, stop: () => stopChild(child) });
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`next ${args.join(" ")} exited with ${code}`))));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

let stopping = false;
async function shutdown(code: number) {
  if (stopping) return;
  stopping = true;
  for (const s of started.reverse()) await s.stop().catch((error: unknown) => console.error(`failed to stop ${s.name}:`, error));
  process.exit(code);
}

process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

main().catch(async (error: unknown) => {
  console.error(`[e2e-stack] could not start: ${(error as Error).message}`);
  await shutdown(1);
});
