import "server-only";
import { timingSafeEqual, createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { db } from "@/lib/db/client";
import { openPools } from "@/lib/db/pools";
import { env } from "@/lib/env";
import { getLedgerHealth } from "@/lib/ledger/ledger-health";
import { platformFundsAvailable } from "@/lib/ledger/probe-payments";
import { holdsInFlight } from "@/lib/ops/request-context";
import { processState } from "@/lib/process-state";

/**
 * Prometheus metrics (prom-client), served by the front door at GET /metrics to a bearer of METRICS_TOKEN.
 * One registry per process (lib/process-state.ts): Next's server bundle and the process hosting it each load this module,
 * and both must count into the same series. Every label takes its values from a closed set (routeLabel, methodLabel,
 * statuses, error codes; offer ids and job names are rows and code, not requests), so no request can add series of its own.
 */
function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  const metric = { registers: [registry] };
  return {
    registry,
    requests: new Counter({
      name: "svc_http_requests_total",
      help: "HTTP requests answered, by route, method and status",
      labelNames: ["route", "method", "status"],
      ...metric,
    }),
    latency: new Histogram({
      name: "svc_http_request_duration_seconds",
      help: "Time to answer, by route and method",
      labelNames: ["route", "method"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      ...metric,
    }),
    errors: new Counter({
      name: "svc_errors_total",
      help: "Error answers by status and code (402 and 503 included)",
      labelNames: ["status", "code"],
      ...metric,
    }),
    completions: new Counter({
      name: "svc_completions_total",
      help: "Chat completions answered, by status",
      labelNames: ["status"],
      ...metric,
    }),
    reservations: new Counter({
      name: "svc_reservations_total",
      help: "Completion reservations, by outcome",
      labelNames: ["outcome"],
      ...metric,
    }),
    clears: new Counter({ name: "svc_clears_total", help: "Completions cleared (buyer charged, supplier paid)", ...metric }),
    clearedMicros: new Counter({ name: "svc_cleared_usdc_micros_total", help: "Micro-USDC charged by clears", ...metric }),
    upstreamLatency: new Histogram({
      name: "svc_upstream_request_duration_seconds",
      help: "Upstream chat completion latency, by offer",
      labelNames: ["offer"],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      ...metric,
    }),
    upstreamFailures: new Counter({
      name: "svc_upstream_failures_total",
      help: "Upstream failures counted against an offer's health",
      labelNames: ["offer"],
      ...metric,
    }),
    topUps: new Counter({ name: "svc_topups_total", help: "x402 top-ups by outcome", labelNames: ["outcome"], ...metric }),
    withdrawals: new Counter({
      name: "svc_withdrawals_total",
      help: "Supplier withdrawals by outcome",
      labelNames: ["outcome"],
      ...metric,
    }),
    relayerTransactions: new Counter({ name: "svc_relayer_transactions_total", help: "Relayer transactions broadcast", ...metric }),
    relayerResigned: new Counter({
      name: "svc_relayer_resigned_total",
      help: "Relayer transactions signed again because their nonce was taken",
      ...metric,
    }),
    jobRuns: new Counter({
      name: "svc_job_runs_total",
      help: "Background job runs on this instance (the fleet runs each tick once)",
      labelNames: ["job", "outcome"],
      ...metric,
    }),
    jobLastSuccess: new Gauge({
      name: "svc_job_last_success_timestamp_seconds",
      help: "When a job last finished without error on this instance",
      labelNames: ["job"],
      ...metric,
    }),
    probes: new Counter({
      name: "svc_probes_total",
      help: "Fidelity probes sent, by verdict (unanswered: an outage, left to the offer's health)",
      labelNames: ["outcome"],
      ...metric,
    }),
    probesSkipped: new Counter({
      name: "svc_probes_skipped_total",
      help: "Fidelity probes not sent: the day's budget or the platform's balance could not pay, or the offer had no capacity left",
      labelNames: ["reason"],
      ...metric,
    }),
    probeChargedMicros: new Counter({
      name: "svc_probe_charged_usdc_micros_total",
      help: "Micro-USDC the platform was charged for fidelity probes (the suppliers' share left its fee accounts)",
      ...metric,
    }),
    // What pays for the probes, read at each scrape; SvcProbeFundsLow compares the first with the last.
    probeFundsAvailable: new Gauge({
      name: "svc_probe_funds_available_usdc_micros",
      help: "Micro-USDC the platform fee accounts can pay fidelity probes with now (balance less holds, every shard)",
      ...metric,
    }),
    probeSpentToday: new Gauge({
      name: "svc_probe_spent_today_usdc_micros",
      help: "Micro-USDC today's (UTC) fidelity probes cost or hold (counted against the day's budget)",
      ...metric,
    }),
    probeDailyBudget: new Gauge({
      name: "svc_probe_daily_budget_usdc_micros",
      help: "The most a UTC day's fidelity probes may cost (PROBE_DAILY_BUDGET_MICROS; 0 when probe rounds are off)",
      ...metric,
    }),
    ledgerOk: new Gauge({
      name: "svc_ledger_invariants_ok",
      help: "1 when the last ledger invariant check passed, 0 when it found violations or could not run",
      ...metric,
    }),
    holds: new Gauge({
      name: "svc_holds_in_flight",
      help: "Completion holds this instance took and has not cleared or released",
      registers: [registry],
      collect() {
        this.set(holdsInFlight().length);
      },
    }),
    relayerEth: new Gauge({
      name: "svc_relayer_balance_eth",
      help: "The relayer's ETH on Base (it pays the gas of settlements and withdrawals)",
      ...metric,
    }),
    treasuryAllowance: new Gauge({
      name: "svc_treasury_allowance_usdc",
      help: "USDC the treasury lets the relayer pay out as withdrawals (its approve)",
      ...metric,
    }),
    treasuryUsdc: new Gauge({ name: "svc_treasury_balance_usdc", help: "USDC the treasury holds", ...metric }),
    chainReadOk: new Gauge({
      name: "svc_chain_read_ok",
      help: "1 when the chain figures above were read at the last scrape, 0 when the RPC failed",
      ...metric,
    }),
    pendingPayments: new Gauge({
      name: "svc_payments_pending",
      help: "Top-ups recorded but neither credited nor failed, by age",
      labelNames: ["age"],
      ...metric,
    }),
    pendingWithdrawals: new Gauge({
      name: "svc_withdrawals_pending",
      help: "Withdrawals debited but not yet confirmed sent or reversed, by age",
      labelNames: ["age"],
      ...metric,
    }),
    oldestPendingWithdrawal: new Gauge({
      name: "svc_withdrawals_oldest_pending_seconds",
      help: "Age of the oldest withdrawal neither confirmed sent nor reversed (0 when none): one the chain cannot prove either way stays pending",
      ...metric,
    }),
    dbPool: new Gauge({
      name: "svc_db_pool_connections",
      help: "Database pool connections by pool (prisma: everything but the hot path; hot_path: reservations and clears) and state",
      labelNames: ["pool", "state"],
      registers: [registry],
      // The pools the database modules opened (lib/db/pools.ts), read at each scrape.
      collect() {
        for (const [name, pool] of openPools()) {
          this.set({ pool: name, state: "total" }, pool.totalCount);
          this.set({ pool: name, state: "idle" }, pool.idleCount);
          this.set({ pool: name, state: "waiting" }, pool.waitingCount);
        }
      },
    }),
  };
}

type Metrics = ReturnType<typeof createMetrics>;
export const metrics: Metrics = processState("metrics", createMetrics);

/** A request the route table has no template for, whatever its path (never the raw path: that is a stranger's choice). */
export const UNMATCHED_ROUTE = "unmatched";
/** A page (or anything else outside the API) that the app answered with success or a redirect. */
export const PAGE_ROUTE = "page";
const METHOD_LABELS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const COMPLETIONS_ROUTE = "/v1/chat/completions";

/**
 * A request's route label, from a closed set: the OpenAPI path template the front door's route table matched (the
 * way Next routes the path: `/v1/offers/{id}`), else "page" for a GET or HEAD answered below 400, else "unmatched".
 */
export function routeLabel(input: { template: string | null | undefined; method: string; status: number }): string {
  if (input.template) return input.template;
  return (input.method === "GET" || input.method === "HEAD") && input.status < 400 ? PAGE_ROUTE : UNMATCHED_ROUTE;
}

/** Methods outside the ones routes serve are one value; statuses are numbers (node:http allows 100–999). */
export function methodLabel(method: string): string {
  return METHOD_LABELS.has(method) ? method : "other";
}

export function observeRequest(input: { route: string; method: string; status: number; seconds: number; code?: string }): void {
  const method = methodLabel(input.method);
  metrics.requests.inc({ route: input.route, method, status: String(input.status) });
  metrics.latency.observe({ route: input.route, method }, input.seconds);
  if (input.code) metrics.errors.inc({ status: String(input.status), code: input.code });
  // However the path was spelled; a redirect (Next's 308 for `//` or a trailing slash) is not a completion answered.
  const redirect = input.status >= 300 && input.status < 400;
  if (input.route === COMPLETIONS_ROUTE && method === "POST" && !redirect) metrics.completions.inc({ status: String(input.status) });
}

function tokenMatches(header: string | undefined): boolean {
  const token = env.METRICS_TOKEN;
  const given = /^Bearer (.+)$/i.exec(header ?? "")?.[1];
  if (!token || !given) return false;
  // Compare digests: equal lengths, and no timing hint about the token.
  return timingSafeEqual(createHash("sha256").update(given).digest(), createHash("sha256").update(token).digest());
}

/**
 * GET /metrics for Prometheus: 404 when METRICS_TOKEN is unset (metrics off), 401 without the right bearer token.
 * Served by the front door, outside Next and the OpenAPI description: it is the operator's, not the API's.
 */
export async function serveMetrics(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const send = (status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers });
    res.end(req.method === "HEAD" ? undefined : body);
  };
  if (!env.METRICS_TOKEN) return send(404, "metrics are off: set METRICS_TOKEN\n");
  if (!tokenMatches(req.headers.authorization)) return send(401, "unauthorized\n", { "www-authenticate": 'Bearer realm="metrics"' });
  await Promise.all([refreshLedgerGauge(), refreshChainGauges(), refreshBacklogGauges(), refreshProbeGauges()]);
  send(200, await metrics.registry.metrics(), { "content-type": metrics.registry.contentType });
}

async function refreshLedgerGauge() {
  const health = await getLedgerHealth();
  metrics.ledgerOk.set(health.ok ? 1 : 0);
}

async function refreshProbeGauges() {
  const today = new Date().toISOString().slice(0, 10);
  const [available, [spent]] = await Promise.all([
    platformFundsAvailable(db),
    db.$queryRaw<{ committed: bigint }[]>`SELECT committed_micros AS committed FROM probe_days WHERE day = ${today}::date`,
  ]);
  metrics.probeFundsAvailable.set(Number(available));
  metrics.probeSpentToday.set(Number(spent?.committed ?? 0n));
  metrics.probeDailyBudget.set(env.PROBE_INTERVAL_MS > 0 ? env.PROBE_DAILY_BUDGET_MICROS : 0);
}

// Chain reads cost RPC calls: at most one round per CHAIN_READ_MS, whatever the scrape rate.
const CHAIN_READ_MS = 30_000;
let chainReadAt = 0;

async function refreshChainGauges() {
  if (Date.now() - chainReadAt < CHAIN_READ_MS) return;
  chainReadAt = Date.now();
  // Loaded at the first scrape, not by every module that counts something: the chain clients derive the relayer's
  // account from its key when they load, and only this reads the chain.
  const [{ publicClient, relayerAccount }, { usdcAbi }] = await Promise.all([import("@/lib/chain/client"), import("@/lib/chain/usdc-abi")]);
  const usdc = env.USDC_ADDRESS as `0x${string}`;
  const treasury = env.TREASURY_ADDRESS as `0x${string}`;
  try {
    const [eth, allowance, held] = await Promise.all([
      publicClient.getBalance({ address: relayerAccount.address }),
      publicClient.readContract({ address: usdc, abi: usdcAbi, functionName: "allowance", args: [treasury, relayerAccount.address] }),
      publicClient.readContract({ address: usdc, abi: usdcAbi, functionName: "balanceOf", args: [treasury] }),
    ]);
    metrics.relayerEth.set(Number(eth) / 1e18);
    // An unlimited approve is 2^256-1: report it as +Inf rather than a float that means nothing.
    metrics.treasuryAllowance.set(allowance > 10n ** 30n ? Infinity : Number(allowance) / 1e6);
    metrics.treasuryUsdc.set(Number(held) / 1e6);
    metrics.chainReadOk.set(1);
  } catch {
    metrics.chainReadOk.set(0);
  }
}

async function refreshBacklogGauges() {
  const rows = await db.$queryRaw<{ kind: string; age: string; n: bigint }[]>`
    SELECT 'payment' AS kind, CASE WHEN created_at < now() - interval '10 minutes' THEN 'over_10m' ELSE 'under_10m' END AS age, count(*) AS n
      FROM payments WHERE status = 'pending' GROUP BY 1, 2
    UNION ALL
    SELECT 'withdrawal', CASE WHEN created_at < now() - interval '10 minutes' THEN 'over_10m' ELSE 'under_10m' END, count(*)
      FROM withdrawals WHERE status = 'pending' GROUP BY 1, 2`;
  for (const gauge of [metrics.pendingPayments, metrics.pendingWithdrawals])
    for (const age of ["under_10m", "over_10m"]) gauge.set({ age }, 0);
  for (const row of rows)
    (row.kind === "payment" ? metrics.pendingPayments : metrics.pendingWithdrawals).set({ age: row.age }, Number(row.n));
  const [oldest] = await db.$queryRaw<{ seconds: number | null }[]>`
    SELECT extract(epoch FROM now() - min(created_at))::float8 AS seconds FROM withdrawals WHERE status = 'pending'`;
  metrics.oldestPendingWithdrawal.set(Math.max(0, Math.floor(oldest?.seconds ?? 0)));
}
