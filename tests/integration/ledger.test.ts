import { describe, expect, it } from "vitest";
import { GET as getBalanceRoute } from "@/app/v1/account/balance/route";
import { GET as getLedgerRoute } from "@/app/v1/account/ledger/route";
import { GET as getLedgerHealthRoute } from "@/app/healthz/ledger/route";
import { db, type Tx } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { createApiKey, revokeApiKey } from "@/lib/auth/api-keys";
import { getBalance, getOrCreateLedgerAccount } from "@/lib/ledger/accounts";
import { checkLedgerInvariants } from "@/lib/ledger/invariants";
import { summarizeLedgerReport } from "@/lib/ledger/ledger-health";
import { postEntry } from "@/lib/ledger/post-entry";
import { EXTERNAL_LEDGER_ACCOUNT_ID, PLATFORM_LEDGER_ACCOUNT_ID } from "@/lib/ledger/system-accounts";
import { seedAccount, seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { seedBuyerBalance, seedDebitedWithdrawal, seedSupplierEarnings } from "../helpers/ledger-factories";

const USDC = 1_000_000n;

describe("postEntry", () => {
  it("moves every balance of the entry and writes lines that sum to zero", async () => {
    const owner = await seedAccount();
    const buyer = await seedBuyerBalance(owner.id, 10n * USDC);
    const platformBefore = await db.ledgerAccount.findUniqueOrThrow({ where: { id: PLATFORM_LEDGER_ACCOUNT_ID } });

    const { entryId } = await db.$transaction((tx) =>
      postEntry(tx, {
        kind: "clear",
        lines: [
          { ledgerAccountId: buyer.id, amountMicros: -3n * USDC },
          { ledgerAccountId: PLATFORM_LEDGER_ACCOUNT_ID, amountMicros: 3n * USDC },
        ],
      }),
    );

    expect((await getBalance("buyer", owner.id)).totalMicros).toBe(7n * USDC);
    const platformAfter = await db.ledgerAccount.findUniqueOrThrow({ where: { id: PLATFORM_LEDGER_ACCOUNT_ID } });
    expect(platformAfter.balanceMicros - platformBefore.balanceMicros).toBe(3n * USDC);
    const lines = await db.journalLine.findMany({ where: { entryId } });
    expect(lines).toHaveLength(2);
    expect(lines.reduce((sum, l) => sum + l.amountMicros, 0n)).toBe(0n);
  });

  it("refuses a debit below the available balance, leaving nothing behind", async () => {
    const owner = await seedAccount();
    const buyer = await seedBuyerBalance(owner.id, 2n * USDC);
    // Other test files post entries concurrently: count only this buyer's.
    const mine = { lines: { some: { ledgerAccountId: buyer.id } } };
    const entriesBefore = await db.journalEntry.count({ where: mine });

    const overdraw = db.$transaction((tx) =>
      postEntry(tx, {
        kind: "clear",
        lines: [
          { ledgerAccountId: buyer.id, amountMicros: -2n * USDC - 1n },
          { ledgerAccountId: PLATFORM_LEDGER_ACCOUNT_ID, amountMicros: 2n * USDC + 1n },
        ],
      }),
    );

    await expect(overdraw).rejects.toSatisfy((e) => e instanceof AppError && e.code === "insufficient_balance");
    expect((await getBalance("buyer", owner.id)).totalMicros).toBe(2n * USDC);
    expect(await db.journalEntry.count({ where: mine })).toBe(entriesBefore);
  });

  it("lets the external contra account go negative and no other", async () => {
    const owner = await seedAccount();
    await seedBuyerBalance(owner.id, 5n * USDC);
    const external = await db.ledgerAccount.findUniqueOrThrow({ where: { id: EXTERNAL_LEDGER_ACCOUNT_ID } });
    expect(external.balanceMicros).toBeLessThan(0n);
  });

  it("rejects entries that do not balance or repeat an account before touching the database", async () => {
    const owner = await seedAccount();
    const buyer = await seedBuyerBalance(owner.id, USDC);
    await expect(
      db.$transaction((tx) =>
        postEntry(tx, {
          kind: "clear",
          lines: [
            { ledgerAccountId: buyer.id, amountMicros: -1n },
            { ledgerAccountId: PLATFORM_LEDGER_ACCOUNT_ID, amountMicros: 2n },
          ],
        }),
      ),
    ).rejects.toThrow(/sum to 1, not 0/);
    await expect(
      db.$transaction((tx) =>
        postEntry(tx, {
          kind: "clear",
          lines: [
            { ledgerAccountId: buyer.id, amountMicros: -1n },
            { ledgerAccountId: buyer.id, amountMicros: 1n },
          ],
        }),
      ),
    ).rejects.toThrow(/one line per ledger account/);
  });

  it("lets exactly as many concurrent debits through as the balance covers", async () => {
    const owner = await seedAccount();
    const buyer = await seedBuyerBalance(owner.id, 5n * USDC);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        db.$transaction((tx) =>
          postEntry(tx, {
            kind: "clear",
            lines: [
              { ledgerAccountId: buyer.id, amountMicros: -USDC },
              { ledgerAccountId: PLATFORM_LEDGER_ACCOUNT_ID, amountMicros: USDC },
            ],
          }),
        ),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(5);
    expect((await getBalance("buyer", owner.id)).totalMicros).toBe(0n);
  });

  it("creates one ledger account per owner and kind, however many ask at once", async () => {
    const owner = await seedAccount();
    const accounts = await Promise.all(
      Array.from({ length: 6 }, () => db.$transaction((tx) => getOrCreateLedgerAccount(tx, "supplier", owner.id))),
    );
    expect(new Set(accounts.map((a) => a.id)).size).toBe(1);
    const buyer = await db.$transaction((tx) => getOrCreateLedgerAccount(tx, "buyer", owner.id));
    expect(buyer.id).not.toBe(accounts[0].id);
  });
});

describe("GET /v1/account/balance", () => {
  it("shows the signed-in account's balance as decimal strings", async () => {
    const me = await seedSignedInAccount();
    await seedBuyerBalance(me.id, 12_500_000n);
    const res = await getBalanceRoute(jsonRequest("GET", "/v1/account/balance", undefined, { cookie: me.cookie }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ available: "12.500000", held: "0.000000", total: "12.500000" });
  });

  it("is zero for an account that never topped up, and needs a session", async () => {
    const me = await seedSignedInAccount();
    const res = await getBalanceRoute(jsonRequest("GET", "/v1/account/balance", undefined, { cookie: me.cookie }));
    expect(await res.json()).toEqual({ available: "0.000000", held: "0.000000", total: "0.000000" });
    const anonymous = await getBalanceRoute(jsonRequest("GET", "/v1/account/balance"));
    expect(anonymous.status).toBe(401);
  });

  it("is readable with any live API key of the account (an agent checks before it calls), never another account's", async () => {
    const me = await seedSignedInAccount();
    await seedBuyerBalance(me.id, 3_000_000n);
    const key = await createApiKey(me.id, { name: "agent" });
    const other = await seedSignedInAccount();
    await seedBuyerBalance(other.id, 9_000_000n);
    const read = (bearer: string) =>
      getBalanceRoute(jsonRequest("GET", "/v1/account/balance", undefined, { authorization: `Bearer ${bearer}` }));

    const res = await read(key.key);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ available: "3.000000", held: "0.000000", total: "3.000000" });

    await revokeApiKey(me.id, key.id);
    const revoked = await read(key.key);
    expect(revoked.status).toBe(401);
    expect((await readError(revoked)).code).toBe("invalid_api_key");
  });
});

describe("GET /v1/account/ledger", () => {
  type Page = {
    data: { id: string; kind: string; ledger: string; amount: string; created_at: string; transaction: string | null }[];
    next_cursor: string | null;
  };

  async function readPage(cookie: string, query = ""): Promise<Page> {
    const res = await getLedgerRoute(jsonRequest("GET", `/v1/account/ledger${query}`, undefined, { cookie }));
    expect(res.status).toBe(200);
    return (await res.json()) as Page;
  }

  it("lists this account's movements newest first, signed from its point of view, and nobody else's", async () => {
    const me = await seedSignedInAccount();
    const someoneElse = await seedAccount();
    await seedBuyerBalance(me.id, 4n * USDC);
    await seedSupplierEarnings(me.id, 9n * USDC);
    await seedBuyerBalance(someoneElse.id, 7n * USDC);
    const myBuyer = await db.ledgerAccount.findFirstOrThrow({ where: { ownerId: me.id, kind: "buyer" } });
    await db.$transaction((tx) =>
      postEntry(tx, {
        kind: "clear",
        lines: [
          { ledgerAccountId: myBuyer.id, amountMicros: -1_250_000n },
          { ledgerAccountId: PLATFORM_LEDGER_ACCOUNT_ID, amountMicros: 1_250_000n },
        ],
      }),
    );

    const page = await readPage(me.cookie);
    expect(page.data.map((i) => [i.kind, i.ledger, i.amount])).toEqual([
      ["clear", "balance", "-1.250000"],
      ["clear", "earnings", "9.000000"],
      ["topup", "balance", "4.000000"],
    ]);
    expect(page.next_cursor).toBeNull();
    expect(page.data.every((i) => !Number.isNaN(Date.parse(i.created_at)))).toBe(true);
  });

  it("pages with an opaque cursor and rejects a forged one", async () => {
    const me = await seedSignedInAccount();
    for (const amount of [1n, 2n, 3n, 4n, 5n]) await seedBuyerBalance(me.id, amount * USDC);

    const first = await readPage(me.cookie, "?limit=2");
    expect(first.data.map((i) => i.amount)).toEqual(["5.000000", "4.000000"]);
    const second = await readPage(me.cookie, `?limit=2&cursor=${first.next_cursor}`);
    expect(second.data.map((i) => i.amount)).toEqual(["3.000000", "2.000000"]);
    const last = await readPage(me.cookie, `?limit=2&cursor=${second.next_cursor}`);
    expect(last.data.map((i) => i.amount)).toEqual(["1.000000"]);
    expect(last.next_cursor).toBeNull();

    const forged = await getLedgerRoute(jsonRequest("GET", "/v1/account/ledger?cursor=12345", undefined, { cookie: me.cookie }));
    expect(forged.status).toBe(400);
    expect((await readError(forged)).code).toBe("invalid_request");
    const tooMany = await getLedgerRoute(jsonRequest("GET", "/v1/account/ledger?limit=1000", undefined, { cookie: me.cookie }));
    expect(tooMany.status).toBe(400);
  });
});

describe("GET /healthz/ledger", () => {
  it("answers 200 with only a verdict and a time while the invariants hold", async () => {
    const res = await getLedgerHealthRoute(jsonRequest("GET", "/healthz/ledger"));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["checked_at", "ok"]);
    expect(body.ok).toBe(true);
  });

  it("reports a broken ledger as a count of violations, never the accounts or amounts", () => {
    const summary = summarizeLedgerReport(
      { ok: false, violations: ["ledger account 1234 balance 5 differs from its lines 0", "journal entry 9 lines sum to 7, not 0"] },
      new Date("2026-01-01T00:00:00Z"),
    );
    expect(summary).toEqual({ ok: false, checked_at: "2026-01-01T00:00:00.000Z", violations: 2 });
  });
});

describe("the money-in and money-out invariants", () => {
  class Rollback extends Error {}

  /** Breaks the ledger inside a transaction, checks it there, and rolls everything back. */
  async function violationsAfter(breakIt: (tx: Tx) => Promise<void>) {
    let violations: string[] = [];
    await db
      .$transaction(async (tx) => {
        await breakIt(tx);
        violations = (await checkLedgerInvariants(tx)).violations;
        throw new Rollback();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Rollback)) throw error;
      });
    return violations;
  }

  it("catch a settled payment that was never credited", async () => {
    const owner = await seedAccount();
    const violations = await violationsAfter(async (tx) => {
      await tx.payment.create({
        data: {
          accountId: owner.id,
          x402Version: 2,
          network: "eip155:8453",
          asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
          payer: owner.walletAddress,
          payTo: owner.walletAddress,
          amountMicros: USDC,
          authorizationNonce: `0x${"ab".repeat(32)}`,
          validAfter: 0n,
          validBefore: 1n,
          status: "settled",
        },
      });
    });
    expect(violations).toEqual([expect.stringMatching(/^payment .* \(settled, 1000000\) is credited 0$/)]);
  });

  it("catch a failed withdrawal whose earnings were never restored", async () => {
    const owner = await seedAccount();
    await seedSupplierEarnings(owner.id, 2n * USDC);
    const violations = await violationsAfter(async (tx) => {
      await seedDebitedWithdrawal(tx, { accountId: owner.id, toAddress: owner.walletAddress, amountMicros: USDC, status: "failed" });
    });
    expect(violations).toEqual([expect.stringMatching(/^withdrawal .* \(failed, 1000000\) moved 1000000 out of the ledger$/)]);
  });
});
