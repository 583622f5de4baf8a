/**
 * `npm run dev`: the whole marketplace on one machine, from a fresh clone.
 * Database (DATABASE_URL, or the embedded PGlite under .data/), migrations, the local chain with USDC,
 * the reference upstream, the catalog and a demo supplier's offers, then the Next.js app.
 * Ctrl-C stops everything it started.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@prisma/client";
import { getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { getDevAccount, type DEV_ROLES } from "../lib/chain/constants";
import { removeDevDatabase, writeDevDatabase } from "../lib/db/dev-database";
import { env } from "../lib/env";
import { seedCatalog, seedDemoSupplier } from "../prisma/seed";
import { startEmbeddedDatabase } from "./embedded-db";
import { startLocalChain } from "./local-chain";
import { migrateDatabase } from "../server/migrate";
import { waitFor } from "./process-utils";
import { startReferenceUpstream } from "./reference-upstream/server";

const PORTS = { app: 3000, chain: 8545, upstream: 8787, embeddedDb: 54329 } as const;
const EMBEDDED_DATA_DIR = ".data/pglite";

type Stoppable = { name: string; stop: () => Promise<void> };
const started: Stoppable[] = [];

function step(message: string) {
  console.log(`\x1b[2m[svc]\x1b[0m ${message}`);
}

async function main() {
  const t0 = performance.now();

  let databaseUrl = env.DATABASE_URL;
  if (databaseUrl) {
    step(`database: ${redact(databaseUrl)} (from DATABASE_URL)`);
  } else {
    step(`database: starting the embedded PGlite (data in ${EMBEDDED_DATA_DIR})`);
    const db = await startEmbeddedDatabase({
      dataDir: EMBEDDED_DATA_DIR,
      port: PORTS.embeddedDb,
      onProgress: (message) => step(`database: ${message}`),
    });
    started.push({ name: "embedded database", stop: db.stop });
    databaseUrl = db.url;
    // The CLIs (npm run catalog, probes…) started beside this stack find its database here (lib/env.ts).
    writeDevDatabase({ url: db.url, pid: process.pid, dataDir: EMBEDDED_DATA_DIR });
    started.push({ name: "dev database file", stop: async () => removeDevDatabase() });
    step(`database: embedded PGlite at ${db.url}`);
  }
  await migrateDatabase(databaseUrl);
  step("migrations applied");

  // This install's own treasury and relayer (lib/env.ts reads them from SVC_DEV_KEYS_FILE, creating it the first
  // time), never anvil's public accounts; the app started below reads the same file.
  const platform = {
    treasury: getAddress(env.TREASURY_ADDRESS),
    relayer: privateKeyToAccount(env.RELAYER_PRIVATE_KEY as `0x${string}`).address,
  };
  const chain = await startLocalChain({ port: PORTS.chain, platform });
  started.push({ name: "local chain", stop: chain.stop });
  step(`chain: anvil (chain id 8453) at ${chain.rpcUrl}, test USDC at the Base address, dev accounts and this install's treasury funded`);

  const upstream = await startReferenceUpstream({ port: PORTS.upstream });
  started.push({ name: "reference upstream", stop: upstream.stop });
  step(`reference upstream (a stand-in for a supplier's LLM provider, not a model) at ${upstream.url}`);

  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  try {
    await seedCatalog(prisma);
    const supplier = getDevAccount("demoSupplier");
    const offers = await seedDemoSupplier(prisma, {
      walletAddress: supplier.address,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
    });
    step(`catalog seeded; demo supplier ${supplier.address} has ${offers} offers`);
  } finally {
    await prisma.$disconnect();
  }

  // Next's dev server behind the front door (server/main.ts), as in production.
  const app = spawn(
    process.execPath,
    ["node_modules/tsx/dist/cli.mjs", "--import", "./server/server-modules.mjs", "server/main.ts", "--dev", "--port", String(PORTS.app)],
    {
      stdio: "inherit",
      env: {
        // eslint-disable-next-line no-restricted-properties -- orchestration: the app inherits the dev configuration
        ...process.env,
        // An absolute path: the app reads the very keys the chain was funded for, whatever its working directory.
        SVC_DEV_KEYS_FILE: path.resolve(env.SVC_DEV_KEYS_FILE),
        DATABASE_URL: databaseUrl,
        BASE_RPC_URL: chain.rpcUrl,
        ALLOW_PRIVATE_UPSTREAMS: "true",
        NEXT_TELEMETRY_DISABLED: "1",
        // The app funds the probes at start (PROBE_DEV_FUNDS_MICROS) and its first round probes the demo offers: a few
        // seconds between probes here, not production's spread, so they show as verified within a minute or two.
        // eslint-disable-next-line no-restricted-properties -- orchestration: an operator's own setting wins
        PROBE_SPREAD_MS: process.env.PROBE_SPREAD_MS ?? "3000",
      },
    },
  );
  started.push({
    name: "app server (next dev)",
    stop: () =>
      new Promise<void>((resolve) => {
        if (app.exitCode !== null) return resolve();
        app.once("exit", () => resolve());
        app.kill("SIGTERM");
      }),
  });
  app.once("exit", (code) => {
    if (!stopping) void shutdown(code ?? 1);
  });

  const origin = `http://localhost:${PORTS.app}`;
  await waitFor("the app to answer /healthz", 180_000, async () => {
    const res = await fetch(`${origin}/healthz`).catch(() => null);
    return res?.status === 200;
  });
  printBanner(origin, databaseUrl, chain.rpcUrl, upstream, platform, Math.round(performance.now() - t0));
}

function printBanner(
  origin: string,
  databaseUrl: string,
  rpcUrl: string,
  upstream: { url: string; apiKey: string },
  platform: { treasury: string; relayer: string },
  ms: number,
) {
  const role = (name: keyof typeof DEV_ROLES) => getDevAccount(name);
  console.log(`
\x1b[1msvc is running\x1b[0m (ready in ${(ms / 1000).toFixed(1)} s)

  Web UI            ${origin}
  API               ${origin}/v1   (try: curl ${origin}/v1/models)
  Health            ${origin}/healthz
  Database          ${env.DATABASE_URL ? redact(databaseUrl) : databaseUrl}${env.DATABASE_URL ? "" : `\n                    (embedded, data in ${EMBEDDED_DATA_DIR}; npm run catalog and the other CLIs use it while this runs)`}
  Chain RPC         ${rpcUrl}   (chain id 8453; add it to your wallet as a custom network)
  Reference upstream ${upstream.url}   (key: ${upstream.apiKey})

  The local chain is a test chain that reuses Base's chain id (8453) and USDC contract address: a payment a
  wallet signs for it is valid on Base mainnet too. Pay only from these dev wallets (anvil's public test keys,
  each holding 1,000,000 test USDC), never from a wallet that holds real funds:
    buyer      ${role("demoBuyer").address}   key ${role("demoBuyer").privateKey}
    supplier   ${role("demoSupplier").address}   key ${role("demoSupplier").privateKey}
  This install's own platform accounts (keys generated once, in ${env.SVC_DEV_KEYS_FILE}, git-ignored):
    treasury   ${platform.treasury}   (every top-up pays it)
    relayer    ${platform.relayer}

  Next: open the web UI, connect a wallet with the buyer key, sign in, top up, create an API key,
  then call POST ${origin}/v1/chat/completions with it. Ctrl-C stops everything.
`);
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}

let stopping = false;
async function shutdown(code: number) {
  if (stopping) return;
  stopping = true;
  step("stopping…");
  for (const s of started.reverse()) {
    await s.stop().catch((error: unknown) => console.error(`failed to stop ${s.name}:`, error));
  }
  process.exit(code);
}

process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

main().catch(async (error: unknown) => {
  console.error(`\n[svc] could not start: ${(error as Error).message}`);
  await shutdown(1);
});
