/**
 * Running svc for real (issue 14), against the production build the e2e stack made: every test here starts its
 * own app processes with the production commands (`npm run db:deploy`, `npm run serve`) on databases of its own,
 * beside a local chain and reference upstreams of its own (ports moved by SVC_E2E_PORT_OFFSET), and looks at what
 * an operator would: the HTTP answers, the chain, the database, /metrics, the logs. No browser.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { expect, test } from "@playwright/test";
import pg from "pg";
import { createPublicClient, http, type Hash } from "viem";
import { base } from "viem/chains";
import { ANVIL_DEV_ACCOUNTS } from "../../lib/chain/constants";
import { generateDevKeys } from "../../lib/chain/dev-keys";
import type { CreatedApiKey } from "../../lib/auth/schemas";
import { startLocalChain, type LocalChain } from "../../scripts/local-chain";
import { resetTestDatabase } from "../../scripts/migrate";
import { waitFor } from "../../scripts/process-utils";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { AnswerGate } from "../../tests/helpers/answer-gate";
import { bearerClient, SvcSession } from "../fixtures/api";
import { E2E_PORTS } from "../fixtures/stack";

test.describe.configure({ mode: "serial", timeout: 240_000 });

// eslint-disable-next-line no-restricted-properties -- test orchestration hands configuration to the processes it starts
const env = process.env;
const PG = (env.SVC_OPS_PG_BASE ?? "postgresql://postgres@127.0.0.1:5432").replace(/\/$/, "");
const METRICS_TOKEN = "ops-e2e-metrics-token-0123456789";
const PORTS = {
  chain: E2E_PORTS.chain + 40,
  upstream: E2E_PORTS.upstream + 40,
  slowUpstream: E2E_PORTS.upstream + 41,
  app: E2E_PORTS.app + 40,
};
const [BUYER, SUPPLIER, BUYER2, BUYER3] = [4, 5, 6, 7].map((i) => ANVIL_DEV_ACCOUNTS[i]);
// This file's own treasury and relayer, as a dev install generates its own (never anvil's public accounts).
const PLATFORM = generateDevKeys();
const RELAYER = PLATFORM.relayer.address;

let chain: LocalChain;
let upstream: ReferenceUpstream;
let slowUpstream: ReferenceUpstream;
/** Holds the slow upstream's chat answers until the test lets them go: "in flight" is then a fact, not a delay. */
const gate = new AnswerGate();

test.beforeAll(async () => {
  [chain, upstream, slowUpstream] = await Promise.all([
    startLocalChain({ port: PORTS.chain, platform: { treasury: PLATFORM.treasury.address, relayer: RELAYER } }),
    startReferenceUpstream({ port: PORTS.upstream }),
    startReferenceUpstream({ port: PORTS.slowUpstream, gate: gate.pass }),
  ]);
});
test.afterAll(async () => {
  gate.release();
  await Promise.all([chain?.stop(), upstream?.stop(), slowUpstream?.stop()]);
});

function databaseUrl(name: string) {
  return `${PG}/${name}`;
}

function appEnv(db: string, port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: env.PATH,
    HOME: env.HOME,
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl(db),
    BASE_RPC_URL: chain.rpcUrl,
    TREASURY_ADDRESS: PLATFORM.treasury.address,
    RELAYER_PRIVATE_KEY: PLATFORM.relayer.privateKey,
    SVC_ORIGIN: `http://127.0.0.1:${port}`,
    SVC_ENV: "test",
    ALLOW_PRIVATE_UPSTREAMS: "true",
    METRICS_TOKEN,
    LOG_LEVEL: "info",
    WITHDRAWAL_MIN_USD: "0.000001",
    RATE_LIMIT_WRITES_PER_IP_PER_MINUTE: "100000",
    RATE_LIMIT_WRITES_PER_ACCOUNT_PER_MINUTE: "100000",
    NEXT_TELEMETRY_DISABLED: "1",
    ...extra,
  };
}

/** Runs a command to its end; resolves with its exit code and output. */
function runCommand(
  command: string,
  args: string[],
  childEnv: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

type App = { origin: string; child: ChildProcess; output: () => string; exited: Promise<number | null>; stop: () => Promise<void> };

/** `npm run serve` (or the same script without npm, to signal the server process itself), until /healthz says ok. */
async function serve(db: string, port: number, extra: Record<string, string> = {}, options: { viaNpm?: boolean } = {}): Promise<App> {
  const args = ["--port", String(port), "--hostname", "127.0.0.1"];
  const child = options.viaNpm
    ? spawn("npm", ["run", "--silent", "serve", "--", ...args], { env: appEnv(db, port, extra), stdio: ["ignore", "pipe", "pipe"] })
    : spawn(process.execPath, ["--import", "tsx", "--import", "./server/server-modules.mjs", "server/serve.ts", ...args], {
        env: appEnv(db, port, extra),
        stdio: ["ignore", "pipe", "pipe"],
      });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const origin = `http://127.0.0.1:${port}`;
  await waitFor("the app to answer /healthz", 120_000, async () => {
    if (child.exitCode !== null) throw new Error(`the app exited early:\n${output}`);
    return (await fetch(`${origin}/healthz`).catch(() => null))?.status === 200;
  }).catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}:\n${output}`);
  });
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  };
  return { origin, child, output: () => output, exited, stop };
}

async function query<T extends Record<string, unknown>>(db: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl(db) });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** The ledger's invariants, straight from the tables: balanced entries, balances equal to their lines, held = active holds. */
async function assertLedgerInvariants(db: string) {
  const [row] = await query<{ unbalanced: string; drift: string; held_drift: string; negative: string }>(
    db,
    `SELECT
       (SELECT count(*) FROM (SELECT entry_id FROM journal_lines GROUP BY entry_id HAVING sum(amount_micros) <> 0) e) AS unbalanced,
       (SELECT count(*) FROM ledger_accounts a WHERE a.balance_micros <> COALESCE((SELECT sum(amount_micros) FROM journal_lines l WHERE l.ledger_account_id = a.id), 0)
          AND a.kind <> 'external') AS drift,
       (SELECT count(*) FROM ledger_accounts a WHERE a.kind = 'buyer'
          AND a.held_micros <> COALESCE((SELECT sum(amount_micros) FROM holds h WHERE h.account_id = a.owner_id AND h.status = 'active'), 0)) AS held_drift,
       (SELECT count(*) FROM ledger_accounts a WHERE a.kind IN ('buyer', 'supplier') AND (a.balance_micros < 0 OR a.held_micros > a.balance_micros)) AS negative`,
  );
  expect(row).toEqual({ unbalanced: "0", drift: "0", held_drift: "0", negative: "0" });
}

async function scrape(origin: string): Promise<string> {
  const res = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

function sumSeries(text: string, prefix: string): number {
  return text
    .split("\n")
    .filter((l) => l.startsWith(prefix))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

const chainClient = () => createPublicClient({ chain: base, transport: http(chain.rpcUrl) });

test("from an empty PostgreSQL, the production commands alone give a market that serves a completion", async () => {
  const db = "svc_ops_prod_test";
  await resetTestDatabase(databaseUrl(db));

  // SVC_ENV=production with the dev keys and no secrets: refused before anything starts, every problem listed.
  const refused = await runCommand("npm", ["run", "--silent", "serve"], {
    PATH: env.PATH,
    HOME: env.HOME,
    NODE_ENV: "production",
    SVC_ENV: "production",
  });
  expect(refused.code).toBe(1);
  for (const name of ["RELAYER_PRIVATE_KEY", "SECRET_KEY", "TREASURY_ADDRESS", "DATABASE_URL", "METRICS_TOKEN"])
    expect(refused.stderr).toContain(`${name}:`);

  const deploy = await runCommand("npm", ["run", "--silent", "db:deploy"], appEnv(db, PORTS.app));
  expect(deploy.code, deploy.stderr).toBe(0);
  expect(deploy.stdout).toContain("seeded 4 models from catalog/default.json");

  const app = await serve(db, PORTS.app, {}, { viaNpm: true });
  try {
    const models = (await (await fetch(`${app.origin}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(
      expect.arrayContaining(["llama-3.3-70b", "qwen3-235b", "mistral-31-24b", "venice-uncensored"]),
    );

    const supplier = await SvcSession.signIn(SUPPLIER, app.origin);
    await supplier.postOffer({
      upstream_base_url: upstream.url,
      upstream_api_key: upstream.apiKey,
      models: ["llama-3.3-70b"],
      price_cents: 90,
      daily_capacity: "50",
    });

    const buyer = await SvcSession.signIn(BUYER, app.origin);
    const topUp = await buyer.topUp("2.00");
    expect(topUp.credited).toBe("2.000000");
    const key = await buyer.createKey({ name: "production path" });
    const { data, response } = await bearerClient(key.key, app.origin)
      .chat.completions.create({
        model: "llama-3.3-70b",
        messages: [{ role: "user", content: "Hello from a fresh install" }],
        max_tokens: 32,
      })
      .withResponse();
    expect(data.choices[0].message.content).toBeTruthy();
    expect(response.headers.get("x-svc-price-cents")).toBe("90");
    const [clear] = await query<{ n: string }>(
      db,
      "SELECT count(*) AS n FROM clears c JOIN completions p ON p.id = c.completion_id WHERE p.id = $1",
      [data.id],
    );
    expect(clear.n).toBe("1");
    await assertLedgerInvariants(db);
  } finally {
    await app.stop();
  }
});

test("two instances on one database: concurrent top-ups and withdrawals get distinct relayer nonces, and each job runs once per tick", async () => {
  const db = "svc_ops_multi_test";
  await resetTestDatabase(databaseUrl(db));
  const deploy = await runCommand("npm", ["run", "--silent", "db:deploy"], appEnv(db, PORTS.app));
  expect(deploy.code, deploy.stderr).toBe(0);
  const jobs = { JOBS_INTERVAL_MS: "1000" };
  const startedAt = Date.now();
  const [a, b] = await Promise.all([
    serve(db, PORTS.app + 1, { ...jobs, INSTANCE_ID: "instance-a" }),
    serve(db, PORTS.app + 2, { ...jobs, INSTANCE_ID: "instance-b" }),
  ]);
  try {
    // A supplier with earnings: an offer, and a buyer's completions through both instances.
    const supplierOn = { a: await SvcSession.signIn(SUPPLIER, a.origin), b: await SvcSession.signIn(SUPPLIER, b.origin) };
    await supplierOn.a.postOffer({
      upstream_base_url: upstream.url,
      upstream_api_key: upstream.apiKey,
      models: ["qwen3-235b"],
      price_cents: 100,
      daily_capacity: "50",
    });
    const buyer = await SvcSession.signIn(BUYER, a.origin);
    await buyer.topUp("3.00");
    const key = await buyer.createKey();
    for (const app of [a, b, a, b, a, b]) {
      await bearerClient(key.key, app.origin).chat.completions.create({
        model: "qwen3-235b",
        messages: [{ role: "user", content: "Write a long paragraph about order books and price-time priority." }],
        max_tokens: 800,
      });
    }
    const earnings = await supplierOn.a.ok<{ available: string }>("GET", "/v1/supply/earnings");
    const availableMicros = BigInt(earnings.available.replace(".", ""));
    const each = availableMicros / 10n;
    expect(each).toBeGreaterThan(0n);
    const amount = `0.${each.toString().padStart(6, "0")}`;

    const nonceBefore = await chainClient().getTransactionCount({ address: RELAYER, blockTag: "pending" });
    const sentBefore =
      sumSeries(await scrape(a.origin), "svc_relayer_transactions_total") +
      sumSeries(await scrape(b.origin), "svc_relayer_transactions_total");
    const payers = await Promise.all([
      SvcSession.signIn(BUYER, a.origin),
      SvcSession.signIn(BUYER2, b.origin),
      SvcSession.signIn(BUYER3, a.origin),
      SvcSession.signIn(BUYER, b.origin),
      SvcSession.signIn(BUYER2, a.origin),
      SvcSession.signIn(BUYER3, b.origin),
    ]);
    const withdrawals = Array.from({ length: 8 }, (_, i) => (i % 2 ? supplierOn.b : supplierOn.a));
    const results = await Promise.all([
      ...payers.map((p) => p.topUp("1.00").then((r) => r.transaction as Hash)),
      ...withdrawals.map((s) =>
        s.ok<{ tx_hash: Hash | null; status: string }>("POST", "/v1/supply/withdrawals", { amount }).then((w) => w),
      ),
    ]);
    const withdrawalRows = await query<{ tx_hash: string; status: string }>(db, "SELECT tx_hash, status FROM withdrawals");
    expect(withdrawalRows).toHaveLength(8);
    const hashes = [...results.slice(0, payers.length), ...withdrawalRows.map((w) => w.tx_hash)] as Hash[];
    expect(new Set(hashes).size).toBe(14);

    const client = chainClient();
    const txs = await Promise.all(hashes.map((hash) => client.getTransaction({ hash })));
    const receipts = await Promise.all(hashes.map((hash) => client.waitForTransactionReceipt({ hash })));
    expect(receipts.every((r) => r.status === "success")).toBe(true);
    expect(txs.every((t) => t.from.toLowerCase() === RELAYER.toLowerCase())).toBe(true);
    const nonces = txs.map((t) => t.nonce).sort((x, y) => x - y);
    // Distinct, gapless, and nothing else mined from the relayer: no transaction was signed twice.
    expect(nonces).toEqual(Array.from({ length: 14 }, (_, i) => nonceBefore + i));
    expect(await client.getTransactionCount({ address: RELAYER })).toBe(nonceBefore + 14);
    const [metricsA, metricsB] = await Promise.all([scrape(a.origin), scrape(b.origin)]);
    expect(sumSeries(metricsA, "svc_relayer_resigned_total") + sumSeries(metricsB, "svc_relayer_resigned_total")).toBe(0);
    expect(sumSeries(metricsA, "svc_relayer_transactions_total") + sumSeries(metricsB, "svc_relayer_transactions_total") - sentBefore).toBe(
      14,
    );
    await assertLedgerInvariants(db);

    // Background jobs: each tick of each job ran on exactly one of the two instances.
    await new Promise((r) => setTimeout(r, 4_000));
    const [jobsA, jobsB] = await Promise.all([scrape(a.origin), scrape(b.origin)]);
    const leases = await query<{ name: string; runs: string }>(db, "SELECT name, runs FROM job_leases ORDER BY name");
    expect(leases.map((l) => l.name)).toEqual([
      "hold-sweeper",
      "offer-quality",
      "payment-reconcile",
      "probe-round",
      "prompt-prefix-sweeper",
      "refusal-prune",
      "withdrawal-reconcile",
    ]);
    // Fidelity probes cost money and keep their own interval (6 h): the fleet ran one round between the two instances.
    const probeRound = leases.find((l) => l.name === "probe-round")!;
    expect(Number(probeRound.runs)).toBe(1);
    const elapsedTicks = Math.ceil((Date.now() - startedAt) / 1000) + 1;
    for (const lease of leases.filter((l) => l !== probeRound)) {
      const ranHere = (text: string) => sumSeries(text, `svc_job_runs_total{job="${lease.name}"`);
      // Runs finished on the instances, plus at most one in flight per instance, account for every lease won.
      const ran = ranHere(jobsA) + ranHere(jobsB);
      expect(Number(lease.runs) - ran).toBeGreaterThanOrEqual(0);
      expect(Number(lease.runs) - ran).toBeLessThanOrEqual(2);
      expect(Number(lease.runs)).toBeLessThanOrEqual(elapsedTicks);
      expect(ran).toBeGreaterThanOrEqual(3);
    }
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

test("SIGTERM during 20 completions in flight: each is answered 200 and cleared, or refused with its hold released", async () => {
  const db = "svc_ops_drain_test";
  await resetTestDatabase(databaseUrl(db));
  const deploy = await runCommand("npm", ["run", "--silent", "db:deploy"], appEnv(db, PORTS.app));
  expect(deploy.code, deploy.stderr).toBe(0);
  // A cheaper offer on the gated upstream takes every completion; its answers wait until the test releases them.
  const setup = await serve(db, PORTS.app + 3);
  let key: CreatedApiKey;
  let buyerId: string;
  try {
    const supplier = await SvcSession.signIn(SUPPLIER, setup.origin);
    await supplier.postOffer({
      upstream_base_url: slowUpstream.url,
      upstream_api_key: slowUpstream.apiKey,
      models: ["mistral-31-24b"],
      price_cents: 10,
      daily_capacity: "50",
    });
    const buyer = await SvcSession.signIn(BUYER3, setup.origin);
    await buyer.topUp("2.00");
    key = await buyer.createKey({ name: "drain" });
    [{ id: buyerId }] = await query<{ id: string }>(db, "SELECT id FROM accounts WHERE lower(wallet_address) = lower($1)", [
      BUYER3.address,
    ]);
  } finally {
    await setup.stop();
  }

  const balance = async () =>
    (
      await query<{ balance_micros: string; held_micros: string }>(
        db,
        "SELECT balance_micros, held_micros FROM ledger_accounts WHERE kind = 'buyer' AND owner_id = $1",
        [buyerId],
      )
    )[0];

  async function twentyInFlight(app: App) {
    const send = (i: number) =>
      fetch(`${app.origin}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${key.key}`,
          "x-request-id": `req_drain-${app.origin.slice(-4)}-${i}`,
        },
        body: JSON.stringify({ model: "mistral-31-24b", messages: [{ role: "user", content: `Completion ${i}` }], max_tokens: 16 }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { id?: string; error?: { code: string } } }));
    const answers = Promise.all(Array.from({ length: 20 }, (_, i) => send(i)));
    // All 20 reserved and forwarded, none answered: the holds are in flight until the gate opens.
    await gate.until(20);
    await expect.poll(async () => (await scrape(app.origin)).match(/^svc_holds_in_flight (\d+)/m)?.[1], { timeout: 20_000 }).toBe("20");
    // Wrapped: an async function returning the promise itself would wait for the answers.
    return { answers };
  }

  // A grace long enough: all 20 finish once the upstream answers, answered 200 and cleared; new connections are
  // refused meanwhile.
  const patient = await serve(db, PORTS.app + 4, { SHUTDOWN_GRACE_MS: "15000" });
  const before = await balance();
  const { answers: first } = await twentyInFlight(patient);
  patient.child.kill("SIGTERM");
  // Not accepting once the signal is handled: a new connection is refused (a kept-alive one would get 503
  // shutting_down), while the 20 are still in flight.
  const probe = () =>
    fetch(`${patient.origin}/healthz`).then(
      (r) => r.status,
      () => "refused",
    );
  await expect.poll(probe, { timeout: 5_000 }).not.toBe(200);
  expect(["refused", 503]).toContain(await probe());
  gate.release();
  const answered = await first;
  expect(answered.map((a) => a.status)).toEqual(Array(20).fill(200));
  expect(await patient.exited).toBe(0);
  const ids = answered.map((a) => a.body.id!);
  const [cleared] = await query<{ n: string }>(db, "SELECT count(*) AS n FROM clears WHERE completion_id = ANY($1)", [ids]);
  expect(cleared.n).toBe("20");
  const afterFirst = await balance();
  expect(afterFirst.held_micros).toBe("0");
  expect(BigInt(afterFirst.balance_micros)).toBeLessThan(BigInt(before.balance_micros));
  // Its access log: one JSON line per request, with the request id, route, status, latency and account.
  const line = patient
    .output()
    .split("\n")
    .find((l) => l.includes('"req_drain-') && l.includes('"message":"request"'));
  expect(line).toBeTruthy();
  expect(JSON.parse(line!)).toMatchObject({ route: "/v1/chat/completions", status: 200, account_id: buyerId, method: "POST" });
  expect(patient.output()).not.toContain(key.key);
  await assertLedgerInvariants(db);

  // A grace that ends while the upstream still holds every answer: all 20 are refused with 503 shutting_down, their
  // holds released, nothing charged.
  const hurried = await serve(db, PORTS.app + 5, { SHUTDOWN_GRACE_MS: "500" });
  const { answers: second } = await twentyInFlight(hurried);
  hurried.child.kill("SIGTERM");
  const refusedAnswers = await second;
  gate.release();
  expect(refusedAnswers.map((a) => [a.status, a.body.error?.code])).toEqual(Array(20).fill([503, "shutting_down"]));
  expect(await hurried.exited).toBe(0);
  const afterSecond = await balance();
  expect(afterSecond).toEqual({ balance_micros: afterFirst.balance_micros, held_micros: "0" });
  const [active] = await query<{ n: string }>(db, "SELECT count(*) AS n FROM holds WHERE account_id = $1 AND status = 'active'", [buyerId]);
  expect(active.n).toBe("0");
  await assertLedgerInvariants(db);
});
