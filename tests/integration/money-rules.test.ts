/**
 * The money and routing rules are SQL (prisma/functions/); lib/money.ts, lib/supply/capacity.ts and
 * lib/supply/offer-health.ts are their TypeScript mirrors. Each rule is compared on thousands of seeded random inputs,
 * weighted to the edges (zero, one micro-unit, the largest values the columns allow, values at and around 2^63 - 1),
 * in one query per rule (unnest over arrays). Where bigint arithmetic cannot hold a result, the SQL must refuse
 * ("bigint out of range", 22003) rather than wrap or round, as each function's contract says.
 * SVC_RULES_SEED=<n> replays a run; SVC_RULES_CASES=<n> changes its size. The seed is printed on every run.
 */
import { describe, expect, it } from "vitest";
import { pgPool } from "@/lib/db/pool";
import { prng } from "../helpers/prng";
import { burnMicroDiem, cachedPromptTokens, chargeMicros, meteredCharge, splitCharge } from "@/lib/money";
import { remainingMicroDiem } from "@/lib/supply/capacity";
import { isHealthy, isOnBook } from "@/lib/supply/offer-health";
import { supplierPublicId } from "@/lib/supply/public-id";

// eslint-disable-next-line no-restricted-properties -- test knobs, read once here
const knobs = process.env;
const SEED = Number(knobs.SVC_RULES_SEED ?? Date.now() % 2 ** 31);
const CASES = Number(knobs.SVC_RULES_CASES ?? 5_000);

const BIGINT_MAX = 2n ** 63n - 1n;
const INT_MAX = 2 ** 31 - 1;

const rng = prng(SEED);
console.log(`money-rules: seed ${SEED} (replay with SVC_RULES_SEED=${SEED}), ${CASES} cases per rule`);

const s = (v: bigint | null) => (v === null ? null : v.toString());

/**
 * Evaluates `expr` over arrays (one per column: c1.. in `expr`) in ONE query; `extra` values follow as $(n+1)..;
 * one text result per row, in order.
 */
async function evaluate(expr: string, columns: string[], values: unknown[][], extra: unknown[] = []): Promise<(string | null)[]> {
  const unnest = columns.map((type, i) => `$${i + 1}::${type}[]`).join(", ");
  const names = columns.map((_, i) => `c${i + 1}`).join(", ");
  const { rows } = await pgPool().query<{ v: string | null }>(
    `SELECT (${expr})::text AS v FROM unnest(${unnest}) WITH ORDINALITY AS t(${names}, n) ORDER BY n`,
    [...values, ...extra],
  );
  return rows.map((r) => r.v);
}

/** The SQL refuses: the statement fails with "bigint out of range" (or numeric's, for a cast). */
async function expectRefused(sql: string, values: unknown[]) {
  await expect(pgPool().query(sql, values)).rejects.toMatchObject({ code: "22003" });
}

describe("the money rules in SQL and their TypeScript mirrors (lib/money.ts)", () => {
  it("burn: ceil(tokens x list price / 1M), exact for any count and price the columns hold", async () => {
    const cases = Array.from({ length: CASES }, () => ({
      prompt: rng.chance(0.05) ? rng.int(0, Number.MAX_SAFE_INTEGER) : Number(rng.big(BigInt(INT_MAX), [999_999n, 1_000_000n])),
      completion: Number(rng.big(BigInt(INT_MAX), [999_999n, 1_000_000n])),
      input: rng.big(BIGINT_MAX, [999_999n, 1_000_000n, 1_000_001n]),
      output: rng.big(BIGINT_MAX, [999_999n, 1_000_000n, 1_000_001n]),
    }));
    cases.push({ prompt: 0, completion: 0, input: 0n, output: 0n }, { prompt: 1, completion: 0, input: 1n, output: 0n });
    const got = await evaluate(
      "svc_burn_micro_diem(c1, c2, c3, c4)",
      ["bigint", "bigint", "bigint", "bigint"],
      [cases.map((c) => c.prompt), cases.map((c) => c.completion), cases.map((c) => s(c.input)), cases.map((c) => s(c.output))],
    );
    const want = cases.map((c) =>
      s(burnMicroDiem(c.prompt, c.completion, { inputMicroDiemPerMTok: c.input, outputMicroDiemPerMTok: c.output })),
    );
    expect(got).toEqual(want);
    expect(got.at(-2)).toBe("0");
    expect(got.at(-1)).toBe("1");
  });

  it("cached burn: the cached prompt tokens (within the prompt) at the cache-read price, or the input price without one", async () => {
    const cases = Array.from({ length: CASES }, () => {
      const prompt = Number(rng.big(BigInt(INT_MAX), [0n, 1n, 999_999n, 1_000_000n]));
      return {
        prompt,
        // Often within the prompt, sometimes beyond it (capped there) or exactly it.
        cached: rng.chance(0.1) ? prompt + rng.int(0, 1000) : rng.chance(0.1) ? prompt : rng.int(0, prompt),
        completion: Number(rng.big(BigInt(INT_MAX), [0n, 1n, 999_999n])),
        input: rng.big(10n ** 12n, [0n, 1n, 999_999n, 1_000_000n]),
        cacheRead: rng.chance(0.2) ? null : rng.big(10n ** 12n, [0n, 1n, 999_999n, 1_000_000n]),
        output: rng.big(10n ** 12n, [0n, 1n, 999_999n, 1_000_000n]),
      };
    });
    const got = await evaluate(
      "svc_cached_burn_micro_diem(c1, c2, c3, c4, c5, c6)",
      ["bigint", "bigint", "bigint", "bigint", "bigint", "bigint"],
      [
        cases.map((c) => c.prompt),
        cases.map((c) => c.cached),
        cases.map((c) => c.completion),
        cases.map((c) => s(c.input)),
        cases.map((c) => s(c.cacheRead)),
        cases.map((c) => s(c.output)),
      ],
    );
    const prices = (c: (typeof cases)[number]) => ({
      inputMicroDiemPerMTok: c.input,
      outputMicroDiemPerMTok: c.output,
      cacheReadMicroDiemPerMTok: c.cacheRead,
    });
    expect(got).toEqual(cases.map((c) => s(burnMicroDiem(c.prompt, c.completion, prices(c), c.cached))));
    // Nothing cached is the plain burn, whatever the cache price.
    for (const c of cases.slice(0, 50))
      expect(burnMicroDiem(c.prompt, c.completion, prices(c), 0)).toBe(burnMicroDiem(c.prompt, c.completion, prices(c)));
  });

  it("cached prompt tokens: the larger of the claim and svc's figure, within the prompt, on a caching offer only", async () => {
    const cases = Array.from({ length: CASES }, () => {
      const prompt = rng.int(0, INT_MAX);
      const figure = () => (rng.chance(0.2) ? null : rng.chance(0.1) ? prompt + rng.int(0, 100) : rng.int(0, prompt));
      return { prompt, claimed: figure(), sent: figure(), caches: rng.chance(0.7) };
    });
    const got = await evaluate(
      "svc_cached_prompt_tokens(c1, c2, c3, c4)",
      ["bigint", "bigint", "bigint", "boolean"],
      [cases.map((c) => c.prompt), cases.map((c) => c.claimed), cases.map((c) => c.sent), cases.map((c) => c.caches)],
    );
    expect(got).toEqual(cases.map((c) => String(cachedPromptTokens(c.prompt, c.claimed, c.sent, c.caches))));
  });

  it("charge: ceil(burn x cents / 100), and refused where burn x cents + 99 passes 2^63 - 1", async () => {
    const cases = Array.from({ length: CASES }, () => ({
      burn: rng.big(BIGINT_MAX, [99n, 100n, 101n, BIGINT_MAX / 10_000n, BIGINT_MAX / 10_000n + 1n]),
      price: rng.chance(0.5) ? rng.int(0, 10_000) : Number(rng.big(BigInt(INT_MAX), [99n, 100n, 101n, 10_000n])),
    }));
    const fits = (c: { burn: bigint; price: number }) => c.burn * BigInt(c.price) + 99n <= BIGINT_MAX;
    const inRange = cases.filter(fits);
    // The boundary itself: the largest burn x price that fits, and the next.
    inRange.push({ burn: BIGINT_MAX - 99n, price: 1 }, { burn: (BIGINT_MAX - 99n) / 10_000n, price: 10_000 });
    const got = await evaluate(
      "svc_charge_micros(c1, c2)",
      ["bigint", "int"],
      [inRange.map((c) => s(c.burn)), inRange.map((c) => c.price)],
    );
    expect(got).toEqual(inRange.map((c) => s(chargeMicros(c.burn, c.price))));

    const outOfRange = [
      { burn: BIGINT_MAX - 98n, price: 1 },
      { burn: BIGINT_MAX, price: 2 },
      ...cases.filter((c) => !fits(c)).slice(0, 10),
    ];
    for (const c of outOfRange) await expectRefused("SELECT svc_charge_micros($1::bigint, $2::int)", [s(c.burn), c.price]);
  });

  it("metered charge: the burn capped at the reserved burn, its charge capped at the reserved amount (the clear's and a probe's)", async () => {
    const cases = Array.from({ length: CASES }, () => {
      const prompt = Number(rng.big(BigInt(INT_MAX), [0n, 1n, 999_999n, 1_000_000n]));
      const completion = Number(rng.big(BigInt(INT_MAX), [0n, 1n, 999_999n]));
      // List prices up to 10^11 micro-diem per 1M tokens and prices up to 10,000 cents keep every burn's charge in bigint.
      const input = rng.big(10n ** 11n, [0n, 1n, 999_999n, 1_000_000n]);
      const output = rng.big(10n ** 11n, [0n, 1n, 999_999n, 1_000_000n]);
      // Prompt caching: a share of the prompt at the cache-read price (none, or no cache price, often).
      const cached = rng.chance(0.3) ? 0 : rng.int(0, prompt);
      const cacheRead = rng.chance(0.3) ? null : rng.big(10n ** 11n, [0n, 1n, 999_999n]);
      const price = rng.int(0, 10_000);
      const burn = burnMicroDiem(
        prompt,
        completion,
        { inputMicroDiemPerMTok: input, outputMicroDiemPerMTok: output, cacheReadMicroDiemPerMTok: cacheRead },
        cached,
      );
      // The reservation: often the exact burn or charge, or one micro-unit either side, else anything.
      const near = (v: bigint) => [v, v + 1n, v > 0n ? v - 1n : 0n, 0n][rng.int(0, 3)];
      const reservedBurn = rng.chance(0.6) ? near(burn) : rng.big(BIGINT_MAX / 10_000n, [0n, 1n]);
      const reserved = rng.chance(0.6) ? near(chargeMicros(burn, price)) : rng.big(BIGINT_MAX, [0n, 1n]);
      return { prompt, cached, completion, input, cacheRead, output, price, reservedBurn, reserved };
    });
    const got = await evaluate(
      "(SELECT m.burn_micro_diem || ' ' || m.charge_micros FROM svc_metered_charge(c1, c2, c3, c4, c5, c6, c7, c8, c9) m)",
      ["bigint", "bigint", "bigint", "bigint", "bigint", "bigint", "integer", "bigint", "bigint"],
      [
        cases.map((c) => c.prompt),
        cases.map((c) => c.cached),
        cases.map((c) => c.completion),
        cases.map((c) => s(c.input)),
        cases.map((c) => s(c.cacheRead)),
        cases.map((c) => s(c.output)),
        cases.map((c) => c.price),
        cases.map((c) => s(c.reservedBurn)),
        cases.map((c) => s(c.reserved)),
      ],
    );
    const want = cases.map((c) => {
      const m = meteredCharge({
        promptTokens: c.prompt,
        cachedTokens: c.cached,
        completionTokens: c.completion,
        prices: { inputMicroDiemPerMTok: c.input, outputMicroDiemPerMTok: c.output, cacheReadMicroDiemPerMTok: c.cacheRead },
        priceCents: c.price,
        reservedBurnMicroDiem: c.reservedBurn,
        reservedMicros: c.reserved,
      });
      return `${m.burnMicroDiem} ${m.chargeMicros}`;
    });
    expect(got).toEqual(want);
    // Both caps bind somewhere in the draw, and neither everywhere.
    const capped = cases
      .map((c, i) => want[i].split(" ").map(BigInt))
      .map(([b, ch], i) => [b === cases[i].reservedBurn, ch === cases[i].reserved]);
    expect(new Set(capped.map(([b]) => b))).toEqual(new Set([true, false]));
    expect(new Set(capped.map(([, ch]) => ch))).toEqual(new Set([true, false]));
  });

  it("split: the supplier gets floor(charge x (10000 - fee) / 10000), the platform the rest; refused past 2^63 - 1", async () => {
    const cases = Array.from({ length: CASES }, () => ({
      charge: rng.big(BIGINT_MAX, [9_999n, 10_000n, 10_001n, BIGINT_MAX / 10_000n, BIGINT_MAX / 10_000n + 1n]),
      feeBps: rng.chance(0.3) ? rng.pick([0, 1, 1000, 5000, 9999, 10_000]) : rng.int(0, 10_000),
    }));
    const fits = (c: { charge: bigint; feeBps: number }) => c.charge * BigInt(10_000 - c.feeBps) <= BIGINT_MAX;
    const inRange = cases.filter(fits);
    const got = await evaluate(
      "svc_supplier_micros(c1, c2)::text || ' ' || svc_fee_micros(c1, c2)::text",
      ["bigint", "int"],
      [inRange.map((c) => s(c.charge)), inRange.map((c) => c.feeBps)],
    );
    expect(got).toEqual(
      inRange.map((c) => {
        const { supplierMicros, feeMicros } = splitCharge(c.charge, c.feeBps);
        expect(supplierMicros + feeMicros).toBe(c.charge);
        return `${supplierMicros} ${feeMicros}`;
      }),
    );

    const outOfRange = [{ charge: BIGINT_MAX / 10_000n + 1n, feeBps: 0 }, ...cases.filter((c) => !fits(c)).slice(0, 10)];
    for (const c of outOfRange) await expectRefused("SELECT svc_supplier_micros($1::bigint, $2::int)", [s(c.charge), c.feeBps]);
    for (const c of outOfRange) await expectRefused("SELECT svc_fee_micros($1::bigint, $2::int)", [s(c.charge), c.feeBps]);
  });
});

describe("the routing rules in SQL and their TypeScript mirrors (lib/supply)", () => {
  const NOW = new Date("2026-11-26T12:00:00.000Z");
  const STATUSES = ["active", "paused", "withdrawn"] as const;
  const maybe = (v: bigint) => (rng.chance(0.1) ? null : v);

  it("remaining capacity: capacity - burned - held, shown never below zero; refused below -2^63", async () => {
    const cases = Array.from({ length: CASES }, () => {
      const capacity = rng.big(BIGINT_MAX);
      const near = (x: bigint) => rng.pick([x, x < BIGINT_MAX ? x + 1n : x, x > 0n ? x - 1n : 0n, rng.big(BIGINT_MAX)]);
      const burned = maybe(rng.chance(0.3) ? near(capacity) : rng.big(BIGINT_MAX));
      const held = maybe(rng.chance(0.3) ? near(capacity - (burned ?? 0n) > 0n ? capacity - (burned ?? 0n) : 0n) : rng.big(BIGINT_MAX));
      return { capacity, burned, held };
    });
    const raw = (c: (typeof cases)[number]) => c.capacity - (c.burned ?? 0n) - (c.held ?? 0n);
    const inRange = cases.filter((c) => raw(c) >= -BIGINT_MAX - 1n);
    const got = await evaluate(
      "svc_offer_remaining_micro_diem(c1, c2, c3)::text || ' ' || GREATEST(svc_offer_remaining_micro_diem(c1, c2, c3), 0)::text",
      ["bigint", "bigint", "bigint"],
      [inRange.map((c) => s(c.capacity)), inRange.map((c) => s(c.burned)), inRange.map((c) => s(c.held))],
    );
    expect(got).toEqual(
      inRange.map((c) => {
        const shown = remainingMicroDiem({
          dailyCapacityMicroDiem: c.capacity,
          burnedMicroDiem: c.burned ?? 0n,
          heldMicroDiem: c.held ?? 0n,
        });
        return `${raw(c)} ${shown}`;
      }),
    );
    await expectRefused("SELECT svc_offer_remaining_micro_diem(0, $1::bigint, $1::bigint)", [s(BIGINT_MAX)]);
  });

  it("health, routability, the book and the features served agree with the TypeScript rules", async () => {
    const cases = Array.from({ length: CASES }, () => {
      const capacity = rng.big(10n ** 12n, [1_000_000n]);
      return {
        status: rng.chance(0.7) ? "active" : rng.pick(STATUSES),
        unhealthyUntil: rng.chance(0.4) ? null : new Date(NOW.getTime() + rng.pick([-1, 0, 1, rng.int(-1e9, 1e9)])),
        delisted: rng.chance(0.2),
        price: rng.int(1, 10_000),
        max: rng.chance(0.2) ? rng.pick([1, 10_000, INT_MAX]) : rng.int(1, 10_000),
        capacity,
        burned: maybe(rng.big(capacity + 2n)),
        held: maybe(rng.big(capacity + 2n)),
        burn: rng.chance(0.3) ? rng.pick([0n, 1n, 2n]) : rng.big(capacity + 2n),
        supports: [rng.chance(0.5), rng.chance(0.5), rng.chance(0.5)],
        wants: [rng.chance(0.3), rng.chance(0.3), rng.chance(0.3)],
      };
    });
    // c1 status, c2 unhealthy_until, c3 price, c4 max, c5 capacity, c6 burned, c7 held, c8 burn, c9..c11 the
    // offer's features, c12..c14 the request's, c15 probe_delisted; $16 now.
    const got = await evaluate(
      `concat_ws(' ', svc_offer_healthy(c2, $16), svc_offer_routable(c1, c2, c15, c3, c5, c6, c7, c4, c8, $16),
                 svc_offer_on_book(c1, c2, c15, c5, c6, c7, $16), svc_offer_model_serves(c9, c10, c11, c12, c13, c14))`,
      [
        "offer_status",
        "timestamptz",
        "int",
        "int",
        "bigint",
        "bigint",
        "bigint",
        "bigint",
        "boolean",
        "boolean",
        "boolean",
        "boolean",
        "boolean",
        "boolean",
        "boolean",
      ],
      [
        cases.map((c) => c.status),
        cases.map((c) => c.unhealthyUntil?.toISOString() ?? null),
        cases.map((c) => c.price),
        cases.map((c) => c.max),
        cases.map((c) => s(c.capacity)),
        cases.map((c) => s(c.burned)),
        cases.map((c) => s(c.held)),
        cases.map((c) => s(c.burn)),
        ...[0, 1, 2].map((f) => cases.map((c) => c.supports[f])),
        ...[0, 1, 2].map((f) => cases.map((c) => c.wants[f])),
        cases.map((c) => c.delisted),
      ],
      [NOW.toISOString()],
    );
    const want = cases.map((c) => {
      const healthy = isHealthy(c, NOW);
      const use = { dailyCapacityMicroDiem: c.capacity, burnedMicroDiem: c.burned ?? 0n, heldMicroDiem: c.held ?? 0n };
      // Routable: active, healthy, at or below the max, and the burn fits in what is left (a capacity cut below
      // today's use fits nothing, not even a zero burn).
      const fits = c.capacity - use.burnedMicroDiem - use.heldMicroDiem >= c.burn;
      const routable = c.status === "active" && healthy && !c.delisted && c.price <= c.max && fits;
      // On the book, as an offer's view states it (lib/supply/offer-views.ts on_book).
      const onBook = isOnBook({ status: c.status, unhealthyUntil: c.unhealthyUntil, probeDelisted: c.delisted }, use, NOW);
      const serves = c.wants.every((w, f) => !w || c.supports[f]);
      return [healthy, routable, onBook, serves].map((b) => (b ? "t" : "f")).join(" ");
    });
    expect(got).toEqual(want);
    // The random cases reach every outcome.
    for (const word of [0, 1, 2, 3]) expect(new Set(want.map((w) => w.split(" ")[word]))).toEqual(new Set(["t", "f"]));
  });
});

describe("the supplier's public id in SQL and its TypeScript mirror (lib/supply/public-id.ts)", () => {
  it("svc_supplier_public_id(account id) is supplierPublicId(account id), which provider.only and provider.ignore name", async () => {
    const ids = [
      "00000000-0000-0000-0000-000000000000",
      "ffffffff-ffff-ffff-ffff-ffffffffffff",
      ...Array.from({ length: 500 }, () => crypto.randomUUID()),
    ];
    const got = await evaluate("svc_supplier_public_id(c1)", ["uuid"], [ids]);
    expect(got).toEqual(ids.map(supplierPublicId));
    for (const id of got) expect(id).toMatch(/^sup_[0-9a-f]{24}$/);
  });
});
