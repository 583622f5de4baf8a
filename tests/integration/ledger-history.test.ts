import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { GET as getBalanceRoute } from "@/app/v1/account/balance/route";
import { GET as getLedgerExportRoute } from "@/app/v1/account/ledger/export/route";
import { GET as getLedgerRoute } from "@/app/v1/account/ledger/route";
import { GET as getDailyEarningsRoute } from "@/app/v1/supply/earnings/daily/route";
import { GET as getEarningsRoute } from "@/app/v1/supply/earnings/route";
import { db } from "@/lib/db/client";
import { formatMicros, parseMicros } from "@/lib/money";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { seedBuyerBalance, seedDebitedWithdrawal } from "../helpers/ledger-factories";
import { seedClear, seedOffer, seedPrivateModel } from "../helpers/market-factories";

/**
 * Issue 28 item 6 and 10: a history people can read (a running balance from the ledger, clears grouped by day and
 * offer, a filter and a range, a CSV of exactly the ledger's lines) and a supplier's earnings per day and offer.
 */

type Item = {
  id: string;
  kind: string;
  ledger: "balance" | "earnings";
  amount: string;
  created_at: string;
  transaction: string | null;
  balance_after: string;
  model: string | null;
  offer: string | null;
  generation_id: string | null;
  count: number;
};
type Page = { object: "list"; data: Item[]; next_cursor: string | null };

const DAY = 86_400_000;
const micros = (s: string) => parseMicros(s.replace(/^-/, ""))! * (s.startsWith("-") ? -1n : 1n);

async function get(cookie: string, query = "") {
  return getLedgerRoute(jsonRequest("GET", `/v1/account/ledger${query}`, undefined, { cookie }));
}

async function readAll(cookie: string, query: string, limit = 200): Promise<Item[]> {
  const items: Item[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(cookie, `?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as Page;
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return items;
}

/** Moves a journal entry (and its clear) to another time, as if it had been written then. */
async function backdate(entryId: string, at: Date) {
  await db.journalEntry.update({ where: { id: entryId }, data: { createdAt: at } });
}

/**
 * A supplier who also buys: a top-up, clears served on two offers over two UTC days, a clear it paid for, and a
 * withdrawal. Returns who it is and its offers.
 */
async function seedTrader() {
  const me = await seedSignedInAccount();
  const model = (await seedPrivateModel()).id;
  const offerA = await seedOffer({ supplierId: me.id, models: [model], priceCents: 50, dailyCapacityMicroDiem: 1_000_000_000n });
  const offerB = await seedOffer({ supplierId: me.id, models: [model], priceCents: 70, dailyCapacityMicroDiem: 1_000_000_000n });
  const today = new Date();
  const yesterday = new Date(today.getTime() - DAY);
  await seedBuyerBalance(me.id, 10_000_000n);
  const served = [
    { offer: offerA, burn: 1_000_000n, at: yesterday },
    { offer: offerA, burn: 2_000_000n, at: yesterday },
    { offer: offerB, burn: 3_000_000n, at: yesterday },
    { offer: offerA, burn: 1_500_000n, at: today },
    { offer: offerA, burn: 2_500_000n, at: today },
    { offer: offerB, burn: 500_000n, at: today },
  ];
  for (const s of served) {
    const clear = await seedClear({ offerId: s.offer.id, modelId: model, burnMicroDiem: s.burn, at: s.at });
    const entry = await db.journalEntry.findUniqueOrThrow({ where: { clearId: clear.id } });
    await backdate(entry.id, s.at);
  }
  // A request this account paid for (on someone else's offer).
  const elsewhere = await seedOffer({ models: [model], priceCents: 100, dailyCapacityMicroDiem: 1_000_000_000n });
  const myBuyer = await db.ledgerAccount.findFirstOrThrow({ where: { ownerId: me.id, kind: "buyer" } });
  const key = await db.apiKey.create({
    data: { accountId: me.id, name: "history", prefix: "svc_history", keyHash: randomBytes(32).toString("hex") },
  });
  const bought = await seedClear({
    offerId: elsewhere.id,
    modelId: model,
    burnMicroDiem: 400_000n,
    buyer: { accountId: me.id, apiKeyId: key.id, ledgerAccountId: myBuyer.id },
  });
  await db.$transaction((tx) =>
    seedDebitedWithdrawal(tx, {
      accountId: me.id,
      toAddress: me.walletAddress,
      amountMicros: 1_000n,
      status: "sent",
      txHash: `0x${"ab".repeat(32)}`,
    }),
  );
  return { me, model, offerA, offerB, today, yesterday, boughtCharge: bought.chargeMicros };
}

describe("GET /v1/account/ledger: the running balance", () => {
  it("gives each line the balance right after it, summing from the first line to the balance the dashboard shows", async () => {
    const { me } = await seedTrader();
    const items = await readAll(me.cookie, "", 3);
    expect(items.length).toBe(9);
    // Oldest first, each ledger's balance after a line is the previous one plus the line.
    const running = { balance: 0n, earnings: 0n };
    for (const item of [...items].reverse()) {
      running[item.ledger] += micros(item.amount);
      expect(item.balance_after, `${item.kind} ${item.ledger} ${item.amount}`).toBe(formatMicros(running[item.ledger]));
    }
    const balance = (await (await getBalanceRoute(jsonRequest("GET", "/v1/account/balance", undefined, { cookie: me.cookie }))).json()) as {
      total: string;
    };
    const earnings = (await (
      await getEarningsRoute(jsonRequest("GET", "/v1/supply/earnings", undefined, { cookie: me.cookie }))
    ).json()) as {
      available: string;
    };
    expect(items.find((i) => i.ledger === "balance")!.balance_after).toBe(balance.total);
    expect(items.find((i) => i.ledger === "earnings")!.balance_after).toBe(earnings.available);
  });

  it("counts the lines a filter hides: a filtered line shows the same balance as unfiltered", async () => {
    const { me } = await seedTrader();
    const all = await readAll(me.cookie, "");
    const withdrawals = await readAll(me.cookie, "&type=withdrawal");
    expect(withdrawals.map((w) => [w.kind, w.amount])).toEqual([["withdrawal", "-0.001000"]]);
    expect(withdrawals[0]!.balance_after).toBe(all.find((i) => i.kind === "withdrawal")!.balance_after);
  });
});

describe("GET /v1/account/ledger: filter, range and groups", () => {
  it("shows top-ups, withdrawals, usage and earnings apart", async () => {
    const { me, offerA, offerB } = await seedTrader();
    expect((await readAll(me.cookie, "&type=topup")).map((i) => [i.kind, i.ledger, i.amount])).toEqual([["topup", "balance", "10.000000"]]);
    const usage = await readAll(me.cookie, "&type=usage");
    expect(usage.map((i) => [i.kind, i.ledger, i.offer])).toEqual([["clear", "balance", null]]);
    const earnings = await readAll(me.cookie, "&type=earnings");
    expect(earnings.length).toBe(6);
    expect(earnings.every((i) => i.kind === "clear" && i.ledger === "earnings")).toBe(true);
    expect(new Set(earnings.map((i) => i.offer))).toEqual(new Set([offerA.id, offerB.id]));
    expect((await readAll(me.cookie, `&type=earnings&offer=${offerB.id}`)).length).toBe(2);
  });

  it("keeps a UTC day range, inclusive at both ends", async () => {
    const { me, yesterday } = await seedTrader();
    const day = yesterday.toISOString().slice(0, 10);
    const onlyYesterday = await readAll(me.cookie, `&from=${day}&to=${day}`);
    expect(onlyYesterday.length).toBe(3);
    expect(onlyYesterday.every((i) => i.created_at.slice(0, 10) === day)).toBe(true);
    const fromYesterday = await readAll(me.cookie, `&from=${day}`);
    expect(fromYesterday.length).toBe(9);
    expect((await readAll(me.cookie, `&to=${day}`)).length).toBe(3);
  });

  it("groups the clears of a day by offer (earnings) and by model (buying), each group whole on one page", async () => {
    const { me, offerA, offerB, today, yesterday, model, boughtCharge } = await seedTrader();
    const flat = await readAll(me.cookie, "");
    for (const limit of [1, 2, 50]) {
      const groups = await readAll(me.cookie, "&group=day", limit);
      const earned = groups.filter((g) => g.ledger === "earnings" && g.kind === "clear");
      const key = (g: Item) => `${g.created_at.slice(0, 10)} ${g.offer}`;
      expect(earned.map(key).sort()).toEqual(
        [offerA, offerB].flatMap((o) => [today, yesterday].map((d) => `${d.toISOString().slice(0, 10)} ${o.id}`)).sort(),
      );
      expect(earned.map((g) => g.count).reduce((a, b) => a + b)).toBe(6);
      for (const g of earned) {
        const lines = flat.filter((f) => f.ledger === "earnings" && f.kind === "clear" && key(f) === key(g));
        expect(g.count).toBe(lines.length);
        expect(g.amount).toBe(formatMicros(lines.reduce((sum, l) => sum + micros(l.amount), 0n)));
        // The group's balance is the one after its newest line.
        expect(g.balance_after).toBe(lines[0]!.balance_after);
        expect(g.created_at).toBe(lines[0]!.created_at);
      }
      expect(groups.filter((g) => g.ledger === "balance" && g.kind === "clear")).toEqual([
        expect.objectContaining({ model, count: 1, amount: formatMicros(-boughtCharge), offer: null }),
      ]);
      expect(groups.filter((g) => g.kind !== "clear").map((g) => g.count)).toEqual([1, 1]);
    }
  });

  it("refuses a filter it cannot read with the API's error shape, naming the parameter", async () => {
    const me = await seedSignedInAccount();
    for (const [query, param] of [
      ["?type=fees", "type"],
      ["?from=2026-13-01", "from"],
      ["?from=2026-11-20&to=2026-11-19", "to"],
      ["?group=week", "group"],
      ["?offer=not-a-uuid", "offer"],
    ] as const) {
      const res = await get(me.cookie, query);
      expect(res.status, query).toBe(400);
      const error = await readError(res);
      expect(error.code).toBe("invalid_request");
      expect(error.message).toContain(param);
    }
    expect((await get("", "")).status).toBe(401);
  });
});

describe("GET /v1/account/ledger/export", () => {
  async function exportCsv(cookie: string, query = "") {
    return getLedgerExportRoute(jsonRequest("GET", `/v1/account/ledger/export${query}`, undefined, { cookie }));
  }

  it("is exactly the ledger's lines for the filter: one row per journal line, exact amounts, a header row", async () => {
    const { me, yesterday } = await seedTrader();
    const res = await exportCsv(me.cookie);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="svc-ledger.csv"');
    const rows = (await res.text())
      .trimEnd()
      .split("\r\n")
      .map((r) => r.split(","));
    expect(rows[0]).toEqual([
      "created_at",
      "entry_id",
      "kind",
      "ledger",
      "amount",
      "balance_after",
      "model",
      "offer",
      "transaction",
      "generation_id",
    ]);
    const flat = await readAll(me.cookie, "");
    expect(rows.slice(1)).toEqual(
      flat.map((i) => [
        i.created_at,
        i.id,
        i.kind,
        i.ledger,
        i.amount,
        i.balance_after,
        i.model ?? "",
        i.offer ?? "",
        i.transaction ?? "",
        i.generation_id ?? "",
      ]),
    );
    // Each request paid for names its generation, the id the buyer was given: the one GET /v1/generations/{id} takes.
    const paid = flat.filter((i) => i.kind === "clear" && i.ledger === "balance");
    expect(paid.length).toBeGreaterThan(0);
    const completions = await db.completion.findMany({ where: { accountId: me.id }, select: { id: true } });
    expect(new Set(paid.map((i) => i.generation_id))).toEqual(new Set(completions.map((c) => c.id)));
    expect(flat.filter((i) => i.ledger === "earnings" || i.kind !== "clear").every((i) => i.generation_id === null)).toBe(true);

    const day = yesterday.toISOString().slice(0, 10);
    const ranged = await exportCsv(me.cookie, `?type=earnings&from=${day}&to=${day}`);
    expect(ranged.headers.get("content-disposition")).toBe(`attachment; filename="svc-ledger-earnings-from-${day}-to-${day}.csv"`);
    const rangedRows = (await ranged.text()).trimEnd().split("\r\n").slice(1);
    expect(rangedRows.length).toBe(3);
    expect(rangedRows.every((r) => r.startsWith(day) && r.includes(",clear,earnings,"))).toBe(true);
  });

  it("needs a session and validates its filter", async () => {
    expect((await exportCsv("")).status).toBe(401);
    const me = await seedSignedInAccount();
    const bad = await exportCsv(me.cookie, "?from=yesterday");
    expect(bad.status).toBe(400);
    expect((await readError(bad)).code).toBe("invalid_request");
    const empty = await exportCsv(me.cookie);
    expect(await empty.text()).toBe("created_at,entry_id,kind,ledger,amount,balance_after,model,offer,transaction,generation_id\r\n");
  });
});

describe("GET /v1/supply/earnings/daily", () => {
  it("sums the earnings ledger per UTC day and offer, as the grouped history does", async () => {
    const { me } = await seedTrader();
    const res = await getDailyEarningsRoute(jsonRequest("GET", "/v1/supply/earnings/daily?days=7", undefined, { cookie: me.cookie }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { object: "list"; data: { day: string; offer: string; earned: string; requests: number }[] };
    const groups = await readAll(me.cookie, "&group=day&type=earnings");
    expect(body.data).toEqual(
      groups
        .map((g) => ({ day: g.created_at.slice(0, 10), offer: g.offer!, earned: g.amount, requests: g.count }))
        .sort((a, b) => (a.day + a.offer).localeCompare(b.day + b.offer)),
    );
    expect(body.data.length).toBe(4);

    const todayOnly = await getDailyEarningsRoute(jsonRequest("GET", "/v1/supply/earnings/daily?days=1", undefined, { cookie: me.cookie }));
    const today = new Date().toISOString().slice(0, 10);
    expect(((await todayOnly.json()) as typeof body).data.map((d) => d.day)).toEqual([today, today]);
  });

  it("bounds the range and needs a session", async () => {
    const me = await seedSignedInAccount();
    const tooLong = await getDailyEarningsRoute(jsonRequest("GET", "/v1/supply/earnings/daily?days=91", undefined, { cookie: me.cookie }));
    expect(tooLong.status).toBe(400);
    expect((await readError(tooLong)).code).toBe("invalid_request");
    expect((await getDailyEarningsRoute(jsonRequest("GET", "/v1/supply/earnings/daily"))).status).toBe(401);
  });
});
