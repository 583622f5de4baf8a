import { describe, expect, it } from "vitest";
import { db, type Tx } from "@/lib/db/client";
import { checkLedgerInvariants } from "@/lib/ledger/invariants";
import { EXTERNAL_LEDGER_ACCOUNT_ID, PLATFORM_LEDGER_ACCOUNT_ID } from "@/lib/ledger/system-accounts";
import { seedAccount } from "../helpers/factories";
import { seedClear, seedOffer, seedPrivateModel } from "../helpers/market-factories";

class Rollback extends Error {}

/** Breaks the ledger inside a transaction, checks it there, and rolls everything back. */
async function reportOnBrokenLedger(breakIt: (tx: Tx, ownerId: string) => Promise<void>) {
  const owner = await seedAccount();
  let report: Awaited<ReturnType<typeof checkLedgerInvariants>> | undefined;
  await db
    .$transaction(async (tx) => {
      await breakIt(tx, owner.id);
      report = await checkLedgerInvariants(tx);
      throw new Rollback();
    })
    .catch((error: unknown) => {
      if (!(error instanceof Rollback)) throw error;
    });
  return report!;
}

describe("the ledger invariant check", () => {
  it("passes on the ledger the suite has built so far", async () => {
    expect(await checkLedgerInvariants()).toEqual({ ok: true, violations: [] });
  });

  it("starts from the system accounts the migrations create: platform, external, and 15 more platform fee sub-accounts", async () => {
    const system = await db.ledgerAccount.findMany({ where: { ownerId: null }, orderBy: { id: "asc" } });
    expect(system.map((a) => a.kind)).toEqual(["platform", "external", ...Array<string>(15).fill("platform")]);
  });

  it("catches a balance changed without journal lines", async () => {
    const report = await reportOnBrokenLedger(async (tx, ownerId) => {
      await tx.ledgerAccount.create({ data: { kind: "buyer", ownerId, balanceMicros: 5_000_000n } });
    });
    expect(report.ok).toBe(false);
    expect(report.violations.join("\n")).toMatch(/balance 5000000 differs from its lines 0/);
  });

  it("catches a journal entry whose lines do not sum to zero", async () => {
    const report = await reportOnBrokenLedger(async (tx, ownerId) => {
      const buyer = await tx.ledgerAccount.create({ data: { kind: "buyer", ownerId, balanceMicros: 7n } });
      // The database refuses unbalanced lines; switch its guard off inside this (rolled back) transaction
      // to stand for a ledger corrupted by anything that bypassed it.
      await tx.$executeRawUnsafe(`ALTER TABLE journal_lines DISABLE TRIGGER journal_lines_balanced`);
      const entry = await tx.journalEntry.create({ data: { kind: "topup" } });
      await tx.journalLine.createMany({ data: [{ entryId: entry.id, ledgerAccountId: buyer.id, amountMicros: 7n }] });
    });
    expect(report.ok).toBe(false);
    expect(report.violations.join("\n")).toMatch(/lines sum to 7, not 0/);
  });

  it("catches held money that no active hold accounts for", async () => {
    const report = await reportOnBrokenLedger(async (tx, ownerId) => {
      const buyer = await tx.ledgerAccount.create({ data: { kind: "buyer", ownerId, balanceMicros: 9n, heldMicros: 4n } });
      await tx.ledgerAccount.update({ where: { id: EXTERNAL_LEDGER_ACCOUNT_ID }, data: { balanceMicros: { decrement: 9n } } });
      const entry = await tx.journalEntry.create({ data: { kind: "topup" } });
      await tx.journalLine.createMany({
        data: [
          { entryId: entry.id, ledgerAccountId: buyer.id, amountMicros: 9n },
          { entryId: entry.id, ledgerAccountId: EXTERNAL_LEDGER_ACCOUNT_ID, amountMicros: -9n },
        ],
      });
    });
    expect(report.ok).toBe(false);
    expect(report.violations).toHaveLength(1);
    expect(report.violations[0]).toMatch(/holds 4 but its active holds total 0/);
  });

  it("catches a clear whose charge the ledger did not move", async () => {
    const model = await seedPrivateModel();
    const offer = await seedOffer({ models: [model.id], priceCents: 90, dailyCapacityMicroDiem: 10_000_000n });
    const clear = await seedClear({ offerId: offer.id, modelId: model.id, burnMicroDiem: 5_000n });
    expect((await checkLedgerInvariants()).ok).toBe(true);
    const report = await reportOnBrokenLedger(async (tx) => {
      await tx.clear.update({ where: { id: clear.id }, data: { chargeMicros: { increment: 1n } } });
    });
    expect(report.ok).toBe(false);
    expect(report.violations.join("\n")).toContain(`clear ${clear.id} of ${clear.chargeMicros + 1n} moved buyer -${clear.chargeMicros}`);
  });

  it("catches an offer whose days do not count its clears and their shares (what its supplier's list shows)", async () => {
    const model = await seedPrivateModel();
    const offer = await seedOffer({ models: [model.id], priceCents: 90, dailyCapacityMicroDiem: 10_000_000n });
    const clear = await seedClear({ offerId: offer.id, modelId: model.id, burnMicroDiem: 5_000n });
    const report = await reportOnBrokenLedger(async (tx) => {
      await tx.offerDay.updateMany({ where: { offerId: offer.id }, data: { earnedMicros: { increment: 1n } } });
    });
    expect(report.violations).toEqual([
      `offer ${offer.id} counts 1 clears earning ${clear.supplierMicros + 1n} on its days, but made 1 earning ${clear.supplierMicros}`,
    ]);
  });

  it("catches a probe its entry did not pay exactly, and platform money held for no reserved probe", async () => {
    const model = await seedPrivateModel();
    const offer = await seedOffer({ models: [model.id], priceCents: 100, dailyCapacityMicroDiem: 10_000_000n });
    const report = await reportOnBrokenLedger(async (tx) => {
      const run = await tx.probeRun.create({
        data: {
          roundId: offer.id,
          offerId: offer.id,
          modelId: model.id,
          probe: "capital",
          day: new Date(),
          status: "settled",
          outcome: "passed",
          priceCents: 100,
          inputMicroDiemPerMTok: 1n,
          outputMicroDiemPerMTok: 1n,
          maxBurnMicroDiem: 100n,
          maxChargeMicros: 100n,
          platformAccountId: PLATFORM_LEDGER_ACCOUNT_ID,
          burnMicroDiem: 100n,
          chargeMicros: 100n,
          supplierMicros: 90n,
          feeMicros: 10n,
        },
      });
      await tx.ledgerAccount.update({ where: { id: PLATFORM_LEDGER_ACCOUNT_ID }, data: { heldMicros: { increment: 1n } } });
      expect(run.id).toBeTruthy();
    });
    expect(report.ok).toBe(false);
    const text = report.violations.join("\n");
    expect(text).toMatch(/probe run [0-9a-f-]+ \(settled, share 90\) moved platform 0, supplier 0, others 0/);
    expect(text).toMatch(new RegExp(`platform ledger account ${PLATFORM_LEDGER_ACCOUNT_ID} holds \\d+ but its reserved probes total 0`));
  });

  it("is backed by the database: a negative balance or an unbalanced entry cannot be committed", async () => {
    const owner = await seedAccount();
    await expect(db.ledgerAccount.create({ data: { kind: "buyer", ownerId: owner.id, balanceMicros: -1n } })).rejects.toThrow(
      /would go negative/,
    );
    const buyer = await db.ledgerAccount.create({ data: { kind: "supplier", ownerId: owner.id } });
    const entry = await db.journalEntry.create({ data: { kind: "topup" } });
    await expect(db.journalLine.createMany({ data: [{ entryId: entry.id, ledgerAccountId: buyer.id, amountMicros: 3n }] })).rejects.toThrow(
      /unbalanced by 3 micros/,
    );
    expect(await db.journalLine.count({ where: { ledgerAccountId: buyer.id } })).toBe(0);
    await db.journalEntry.delete({ where: { id: entry.id } });
  });
});
