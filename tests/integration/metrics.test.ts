import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { startCannedUpstream, completion, type CannedUpstream } from "../helpers/canned-upstream";
import { seedPlatformBalance } from "../helpers/ledger-factories";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { seedBuyer } from "../helpers/router-factories";

let app: RouteServer;
let upstream: CannedUpstream;

beforeAll(async () => {
  [app, upstream] = await Promise.all([startRouteServer(), startCannedUpstream([{ id: "canned-model" }])]);
});
afterAll(async () => {
  await Promise.all([app.stop(), upstream.stop()]);
});

async function scrape(token: string | null = env.METRICS_TOKEN!) {
  const res = await fetch(`${app.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, text: await res.text() };
}

/** The value of one series in a Prometheus text exposition (0 when absent). */
function value(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe("GET /metrics", () => {
  it("is refused without the bearer token, or with a wrong one", async () => {
    expect((await scrape(null)).status).toBe(401);
    expect((await scrape("wrong-token-wrong-token")).status).toBe(401);
  });

  it("shows requests, completions, clears, 402s and upstream latency moving after a few completions", async () => {
    const before = (await scrape()).text;
    const model = await seedPrivateModel();
    const offer = await seedOffer({
      models: [{ id: model.id, upstreamModel: "canned-model" }],
      priceCents: 100,
      dailyCapacityMicroDiem: 100_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
    });
    upstream.answer({
      status: 200,
      body: completion({ role: "assistant", content: "hi" }, { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 }),
    });
    const buyer = await seedBuyer(1_000_000n);
    const broke = await seedBuyer(0n);
    const call = (key: string, requestId?: string) =>
      fetch(`${app.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...(requestId && { "x-request-id": requestId }) },
        body: JSON.stringify({ model: model.id, messages: [{ role: "user", content: "hello" }], max_tokens: 16 }),
      });

    const answers = await Promise.all([call(buyer.key, "req_metrics-test-1"), call(buyer.key), call(buyer.key)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await call(broke.key)).status).toBe(402);
    // The buyer's request id reached the upstream unchanged.
    expect(answers[0].headers.get("x-request-id")).toBe("req_metrics-test-1");
    expect(upstream.received.map((r) => r.headers["x-request-id"])).toContain("req_metrics-test-1");
    expect(upstream.received.every((r) => typeof r.headers["x-request-id"] === "string")).toBe(true);

    const { status, text } = await scrape();
    expect(status).toBe(200);
    const completions = 'svc_completions_total{status="200"}';
    expect(value(text, completions) - value(before, completions)).toBe(3);
    expect(value(text, "svc_clears_total") - value(before, "svc_clears_total")).toBeGreaterThanOrEqual(3);
    const insufficient = 'svc_errors_total{status="402",code="insufficient_balance"}';
    expect(value(text, insufficient) - value(before, insufficient)).toBe(1);
    const routed = 'svc_http_requests_total{route="/v1/chat/completions",method="POST",status="200"}';
    expect(value(text, routed) - value(before, routed)).toBe(3);
    expect(value(text, `svc_upstream_request_duration_seconds_count{offer="${offer.id}"}`)).toBe(3);
    expect(text).toContain("svc_holds_in_flight 0");
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).toMatch(/^svc_db_pool_connections\{pool="prisma",state="total"\} \d/m);
    // The completions above went through the hot path's own pool.
    expect(text).toMatch(/^svc_db_pool_connections\{pool="hot_path",state="total"\} [1-9]/m);
    expect(text).toMatch(/^svc_ledger_invariants_ok 1$/m);
    // What the alert rules (docs/prometheus/alerts.yml) watch: the relayer's gas, the treasury's approve, backlogs.
    expect(value(text, "svc_chain_read_ok")).toBe(1);
    expect(value(text, "svc_relayer_balance_eth")).toBeGreaterThan(0);
    expect(text).toMatch(/^svc_treasury_allowance_usdc (\+Inf|\d)/m);
    expect(text).toMatch(/^svc_payments_pending\{age="over_10m"\} \d+$/m);
    const cleared = await db.clear.count({ where: { offerId: offer.id } });
    expect(cleared).toBe(3);
  });

  it("shows what the platform's fee accounts can pay probes with, today's probe spend and the day's budget", async () => {
    await seedPlatformBalance(1_234_567n);
    // Other files move the fee accounts while this runs: read the ledger before and after the scrape until they agree.
    const read = async () => {
      const [row] = await db.$queryRaw<{ available: bigint | null }[]>`
        SELECT SUM(balance_micros - held_micros)::bigint AS available FROM ledger_accounts WHERE kind = 'platform'`;
      const day = await db.probeDay.findUnique({ where: { day: new Date(new Date().toISOString().slice(0, 10)) } });
      return `${row.available ?? 0n} ${day?.committedMicros ?? 0n}`;
    };
    let seen: string[] = [];
    for (let attempt = 0; attempt < 20; attempt++) {
      const before = await read();
      const { text } = await scrape();
      const after = await read();
      seen = [before, `${value(text, "svc_probe_funds_available_usdc_micros")} ${value(text, "svc_probe_spent_today_usdc_micros")}`, after];
      expect(value(text, "svc_probe_daily_budget_usdc_micros")).toBe(env.PROBE_INTERVAL_MS > 0 ? env.PROBE_DAILY_BUDGET_MICROS : 0);
      if (before === after) break;
    }
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).toBe(seen[0]);
    expect(Number(seen[1].split(" ")[0])).toBeGreaterThanOrEqual(1_234_567);
  });
});
