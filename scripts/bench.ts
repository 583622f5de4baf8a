/**
 * `npm run bench`: figures for the hot paths, printed, not asserted (timing assertions flake on 2 cores).
 *
 * - POST /v1/chat/completions through the real route handler (auth, rate limit, reserve, forward to the
 *   reference upstream over HTTP, clear): latency percentiles sequentially and under concurrency, throughput.
 * - The public market routes on a large book (many offers and clears): cold (cache miss) and warm latency.
 *
 * Uses DATABASE_URL if set (its name must contain "bench" or "test": the schema is wiped), else an embedded database.
 * Options: --requests N (default 1000) --concurrency C (default 32) --offers N (default 2000) --clears N (default 50000)
 */
import { parseArgs } from "node:util";
import { seedBenchWorld } from "./bench-world";
import { startEmbeddedDatabase } from "./embedded-db";
import { migrateDatabase } from "../server/migrate";
import { resetTestDatabase } from "./migrate";
import { startReferenceUpstream } from "./reference-upstream/server";

const { values: opts } = parseArgs({
  options: {
    requests: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "32" },
    offers: { type: "string", default: "2000" },
    clears: { type: "string", default: "50000" },
  },
});

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summarize(label: string, ms: number[], wallMs: number) {
  const sorted = [...ms].sort((a, b) => a - b);
  const fmt = (n: number) => n.toFixed(1).padStart(7);
  console.log(
    `${label.padEnd(44)} n=${String(ms.length).padStart(5)}  p50 ${fmt(percentile(sorted, 50))} ms  p95 ${fmt(percentile(sorted, 95))} ms  p99 ${fmt(percentile(sorted, 99))} ms  ${(ms.length / (wallMs / 1000)).toFixed(0).padStart(6)} req/s`,
  );
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const result = await fn();
  return [result, performance.now() - t];
}

async function main() {
  const stops: (() => Promise<void>)[] = [];
  // eslint-disable-next-line no-restricted-properties -- the launcher configures the modules it imports next
  const env = process.env;
  let url = env.DATABASE_URL;
  if (url) {
    await resetTestDatabase(url);
  } else {
    const db = await startEmbeddedDatabase();
    stops.push(db.stop);
    url = db.url;
  }
  await migrateDatabase(url);
  const upstream = await startReferenceUpstream();
  stops.push(upstream.stop);
  Object.assign(env, {
    DATABASE_URL: url,
    ALLOW_PRIVATE_UPSTREAMS: "true",
    LOG_LEVEL: "error",
    RATE_LIMIT_PER_KEY_PER_MINUTE: "1000000",
    RATE_LIMIT_PER_IP_PER_MINUTE: "1000000",
  });

  const { db } = await import("../lib/db/client");
  const { assertLedgerInvariants } = await import("../lib/ledger/invariants");
  const { POST: complete } = await import("../app/v1/chat/completions/route");
  const { key } = await seedBenchWorld({ url: upstream.url, apiKey: upstream.apiKey, dailyCapacityMicroDiem: 1_000_000_000_000n });

  const call = (i: number) =>
    complete(
      new Request("http://localhost:3000/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "llama-3.3-70b", messages: [{ role: "user", content: `bench request ${i}` }], max_tokens: 64 }),
      }),
    );

  console.log(
    `\nsvc bench — database: ${env.DATABASE_URL?.includes("127.0.0.1:5432") ? "PostgreSQL" : "embedded PGlite"}, node ${process.version}\n`,
  );

  for (let i = 0; i < 20; i++) await call(i); // warm up JIT, pools, caches

  const sequential: number[] = [];
  const seqStart = performance.now();
  for (let i = 0; i < 200; i++) {
    const [res, ms] = await timed(() => call(i));
    if (res.status !== 200) throw new Error(`completion failed: ${res.status} ${await res.text()}`);
    sequential.push(ms);
  }
  summarize("chat completion, sequential", sequential, performance.now() - seqStart);

  const total = Number(opts.requests);
  const concurrency = Number(opts.concurrency);
  const concurrent: number[] = [];
  let next = 0;
  let failures = 0;
  const concStart = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const [res, ms] = await timed(() => call(i));
        if (res.status !== 200) failures += 1;
        concurrent.push(ms);
      }
    }),
  );
  summarize(`chat completion, ${concurrency} concurrent`, concurrent, performance.now() - concStart);
  if (failures) console.log(`  ${failures} non-200 answers`);
  await assertLedgerInvariants();
  console.log(`  ledger invariants hold after ${total + 220} clears; RSS ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);

  await benchMarket(db, Number(opts.offers), Number(opts.clears));

  await db.$disconnect();
  for (const stop of stops.reverse()) await stop();
}

async function benchMarket(db: Awaited<typeof import("../lib/db/client")>["db"], offers: number, clears: number) {
  const { encryptCredential } = await import("../lib/upstream/key-encryption");
  const { GET: book } = await import("../app/v1/market/book/route");
  const { GET: models } = await import("../app/v1/market/models/route");
  const { GET: trades } = await import("../app/v1/market/trades/route");
  const { GET: stats } = await import("../app/v1/market/stats/route");
  const { GET: pool } = await import("../app/v1/supply/pool/summary/route");
  const { clearMarketCache } = await import("../lib/market/cache");

  const [, seedMs] = await timed(async () => {
    const ciphertext = encryptCredential("bench");
    await db.$executeRaw`
      WITH s AS (INSERT INTO accounts (wallet_address)
                 SELECT '0x' || lpad(to_hex(g), 40, '0') FROM generate_series(1, ${offers}) g RETURNING id)
      INSERT INTO offers (supplier_id, upstream_base_url, upstream_key_ciphertext, price_cents, daily_capacity_micro_diem)
      SELECT id, 'https://upstream.example/v1', ${ciphertext}, 50 + (random() * 100)::int, 100000000 FROM s`;
    await db.$executeRaw`
      INSERT INTO offer_models (offer_id, model_id, upstream_model)
      SELECT o.id, m.id, m.id FROM offers o CROSS JOIN models m WHERE o.upstream_base_url = 'https://upstream.example/v1'`;
    // Clears need a hold and a completion each; reuse the bench buyer and one key.
    await db.$executeRaw`
      WITH k AS (SELECT id, account_id FROM api_keys LIMIT 1),
           o AS (SELECT id, price_cents, row_number() OVER () AS n FROM offers WHERE upstream_base_url = 'https://upstream.example/v1'),
           g AS (SELECT g, now() - (g % 86400) * interval '1 second' AS at FROM generate_series(1, ${clears}) g),
           h AS (INSERT INTO holds (account_id, api_key_id, offer_id, model_id, day, price_cents, amount_micros, burn_micro_diem, status, expires_at, created_at)
                 SELECT k.account_id, k.id, o.id, 'llama-3.3-70b', g.at::date, o.price_cents, 100, 100, 'cleared', g.at, g.at
                 FROM g CROSS JOIN k JOIN o ON o.n = 1 + (g.g % ${offers})
                 RETURNING id, account_id, api_key_id, offer_id, price_cents, created_at),
           c AS (INSERT INTO completions (id, hold_id, account_id, api_key_id, offer_id, model_id, prompt_tokens, completion_tokens, latency_ms, created_at)
                 SELECT 'chatcmpl-bench' || replace(h.id::text, '-', ''), h.id, h.account_id, h.api_key_id, h.offer_id, 'llama-3.3-70b', 100, 100, 10, h.created_at FROM h
                 RETURNING id, offer_id, created_at)
      INSERT INTO clears (completion_id, offer_id, model_id, price_cents, burn_micro_diem, charge_micros, supplier_micros, fee_micros, created_at)
      SELECT c.id, c.offer_id, 'llama-3.3-70b', 90, 100, 90, 81, 9, c.created_at FROM c`;
  });
  console.log(`\nmarket on ${offers} offers x 4 models and ${clears} clears (seeded in ${(seedMs / 1000).toFixed(1)} s)`);

  const routes: [string, () => Promise<Response>][] = [
    ["GET /v1/market/book?model=llama-3.3-70b", () => book(new Request("http://localhost:3000/v1/market/book?model=llama-3.3-70b"))],
    ["GET /v1/market/models", () => models(new Request("http://localhost:3000/v1/market/models"))],
    ["GET /v1/market/trades?limit=100", () => trades(new Request("http://localhost:3000/v1/market/trades?limit=100"))],
    ["GET /v1/market/stats", () => stats(new Request("http://localhost:3000/v1/market/stats"))],
    ["GET /v1/supply/pool/summary", () => pool(new Request("http://localhost:3000/v1/supply/pool/summary"))],
  ];
  for (const [label, run] of routes) {
    const cold: number[] = [];
    const coldStart = performance.now();
    for (let i = 0; i < 10; i++) {
      clearMarketCache();
      const [res, ms] = await timed(run);
      if (res.status !== 200) throw new Error(`${label}: ${res.status} ${await res.text()}`);
      cold.push(ms);
    }
    summarize(`${label} (cold)`, cold, performance.now() - coldStart);
    const warm: number[] = [];
    const warmStart = performance.now();
    for (let i = 0; i < 200; i++) warm.push((await timed(run))[1]);
    summarize(`${label} (warm)`, warm, performance.now() - warmStart);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
