import { decodePaymentSignatureHeader } from "@x402/core/http";
import { createTestClient, createWalletClient, http, parseSignature, type Address, type Hash, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { afterEach, describe, expect, it, vi } from "vitest";
import { publicClient } from "@/lib/chain/client";
import { ANVIL_DEV_ACCOUNTS, BASE_USDC_ADDRESS } from "@/lib/chain/constants";
import { usdcAbi } from "@/lib/chain/usdc-abi";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { getBalance } from "@/lib/ledger/accounts";
import { registerJob, runJob, startBackgroundJobs, stopBackgroundJobs } from "@/lib/ops/jobs";
import { faults } from "@/lib/payments/faults";
import { reconcilePayments } from "@/lib/payments/reconcile";
import { seedSignedInAccount } from "../helpers/factories";
import { readError } from "../helpers/http";
import { treasuryAddress } from "../helpers/treasury";
import {
  fundedPayer,
  nonceOf,
  postTopUp,
  readChallenge,
  readTopUpStatus,
  readUsdcBalance,
  signPaymentV2,
  transferUsdc,
} from "../helpers/x402-client";

const USDC = 1_000_000n;
// Dev account 6 is this file's: it funds fresh payer wallets and submits authorizations as a third party.
const FUNDER = ANVIL_DEV_ACCOUNTS[6];
const testClient = createTestClient({ mode: "anvil", chain: base, transport: http(env.BASE_RPC_URL) });

afterEach(() => {
  delete faults.topUpBeforeSettle;
  delete faults.topUpBeforeCredit;
  delete faults.beforeReceipt;
});

async function payWithFault(amount: string) {
  const payer = await fundedPayer(FUNDER, 20n * USDC);
  const me = await seedSignedInAccount(payer);
  const { v2 } = await readChallenge(me.cookie, amount);
  const header = await signPaymentV2(payer, v2.accepts[0]);
  const res = await postTopUp(me.cookie, amount, { "payment-signature": header });
  return { me, payer, header, res };
}

describe("a top-up interrupted after the transfer", () => {
  it("is credited exactly once by reconciliation after a crash between settlement and credit", async () => {
    faults.topUpBeforeCredit = vi.fn().mockRejectedValueOnce(new Error("process killed"));
    const { me, payer, header, res } = await payWithFault("6.00");

    expect(res.status).toBe(502);
    expect((await readError(res)).code).toBe("payment_pending");
    expect(await readUsdcBalance(payer.address)).toBe(14n * USDC);
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(0n);
    const pending = await db.payment.findFirstOrThrow({ where: { accountId: me.id } });
    expect(pending.status).toBe("pending");
    expect(pending.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    // The dashboard asking by nonce hears "pending" (do not sign again), then "credited" once reconciled.
    expect(await readTopUpStatus(me.cookie, nonceOf(header))).toMatchObject({
      status: "pending",
      transaction: pending.txHash,
      credited_at: null,
    });

    const first = await reconcilePayments({ graceMs: 0 });
    expect(first.credited).toBeGreaterThanOrEqual(1);
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(6n * USDC);
    expect(await readTopUpStatus(me.cookie, nonceOf(header))).toMatchObject({ status: "credited", transaction: pending.txHash });
    const settled = await db.payment.findUniqueOrThrow({ where: { id: pending.id } });
    expect(settled).toMatchObject({ status: "settled", txHash: pending.txHash });

    await reconcilePayments({ graceMs: 0 });
    await Promise.all([reconcilePayments({ graceMs: 0 }), reconcilePayments({ graceMs: 0 })]);
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(6n * USDC);
    expect(await db.journalEntry.count({ where: { paymentId: pending.id } })).toBe(1);
  });

  it("stays pending through an RPC failure while confirming, then is credited from the chain", async () => {
    faults.beforeReceipt = async () => {
      throw new Error("fetch failed: connect ECONNREFUSED");
    };
    const { me, res } = await payWithFault("2.50");
    delete faults.beforeReceipt;

    expect(res.status).toBe(502);
    const error = await readError(res);
    expect(error.code).toBe("payment_pending");
    const pending = await db.payment.findFirstOrThrow({ where: { accountId: me.id } });
    expect(pending.status).toBe("pending");
    expect(error.message).toContain(pending.txHash!);

    // Younger than the grace period: left to the request that owns it.
    await reconcilePayments();
    expect((await db.payment.findUniqueOrThrow({ where: { id: pending.id } })).status).toBe("pending");

    await reconcilePayments({ graceMs: 0 });
    expect((await db.payment.findUniqueOrThrow({ where: { id: pending.id } })).status).toBe("settled");
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(2_500_000n);
  });
});

describe("a payment that never settled", () => {
  async function seedPendingPayment(validBefore: bigint) {
    const me = await seedSignedInAccount();
    const payer = privateKeyToAccount(ANVIL_DEV_ACCOUNTS[6].privateKey);
    const payment = await db.payment.create({
      data: {
        accountId: me.id,
        x402Version: 2,
        network: "eip155:8453",
        asset: BASE_USDC_ADDRESS,
        payer: payer.address,
        payTo: treasuryAddress,
        amountMicros: USDC,
        authorizationNonce: `0x${crypto.getRandomValues(new Uint8Array(32)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "")}`,
        validAfter: 0n,
        validBefore,
        createdAt: new Date(Date.now() - 5 * 60_000),
      },
    });
    return { me, payment };
  }

  it("is marked failed once the chain passes its validBefore unused, and left pending before", async () => {
    const nowSeconds = BigInt(Math.floor(Date.now() / 1000));
    const expired = await seedPendingPayment(nowSeconds - 5n);
    const stillValid = await seedPendingPayment(nowSeconds + 3600n);
    await testClient.mine({ blocks: 1 });

    await reconcilePayments({ graceMs: 0 });

    const failed = await db.payment.findUniqueOrThrow({ where: { id: expired.payment.id } });
    expect(failed.status).toBe("failed");
    expect(failed.failureReason).toMatch(/expired without settling/);
    expect((await db.payment.findUniqueOrThrow({ where: { id: stillValid.payment.id } })).status).toBe("pending");
    expect((await getBalance("buyer", expired.me.id)).totalMicros).toBe(0n);
    await db.payment.update({ where: { id: stillValid.payment.id }, data: { status: "failed", failureReason: "test cleanup" } });
  });

  it("is still credited if its authorization is executed later by someone else", async () => {
    const payer = await fundedPayer(FUNDER, 4n * USDC);
    const me = await seedSignedInAccount(payer);
    await testClient.setBalance({ address: payer.address, value: 10n ** 18n });
    const { v2 } = await readChallenge(me.cookie, "4.00");
    const header = await signPaymentV2(payer, v2.accepts[0]);
    faults.topUpBeforeSettle = async () => {
      await transferUsdc(payer, FUNDER.address, 4n * USDC);
    };
    const res = await postTopUp(me.cookie, "4.00", { "payment-signature": header });
    expect(res.status).toBe(402);
    expect((await db.payment.findFirstOrThrow({ where: { accountId: me.id } })).status).toBe("failed");

    // The payer refills the wallet and a third party submits the still-valid signed authorization.
    await transferUsdc(FUNDER, payer.address, 4n * USDC);
    const hash = await submitAuthorization(header);
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");

    await reconcilePayments({ graceMs: 0 });
    const payment = await db.payment.findFirstOrThrow({ where: { accountId: me.id } });
    expect(payment).toMatchObject({ status: "settled", txHash: hash, failureReason: null });
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(4n * USDC);
    await reconcilePayments({ graceMs: 0 });
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(4n * USDC);
  });
});

describe("reconciliation on a chain whose RPC caps getLogs ranges", () => {
  it("reads logs in bounded block ranges, remembers where it stopped, and finds a settlement many blocks back", async () => {
    // The scan starts at most 300 blocks (plus the payment's age) behind the newest block, and never before block 0:
    // on a young chain (this file run alone) the settlement would sit inside the first run's pages. Age the chain.
    await testClient.mine({ blocks: 400 });
    const payer = await fundedPayer(FUNDER, 3n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v2 } = await readChallenge(me.cookie, "3.00");
    const header = await signPaymentV2(payer, v2.accepts[0]);
    faults.topUpBeforeSettle = async () => {
      throw new Error("the relayer's RPC is down");
    };
    const res = await postTopUp(me.cookie, "3.00", { "payment-signature": header });
    expect(res.status).toBeGreaterThanOrEqual(400);
    delete faults.topUpBeforeSettle;
    const payment = await db.payment.findFirstOrThrow({ where: { accountId: me.id } });
    expect(payment.status).not.toBe("settled");

    // Someone else settles it, and the chain moves on: the settlement is now far behind the newest block.
    const hash = await submitAuthorization(header);
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    await testClient.mine({ blocks: 120 });

    const cursors: bigint[] = [];
    for (let run = 0; run < 500; run++) {
      await reconcilePayments({ graceMs: 0, logBlockRange: 10, maxLogPages: 3 });
      const row = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
      if (row.status === "settled") break;
      cursors.push(row.logsScannedTo!);
    }
    const settled = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(settled).toMatchObject({ status: "settled", txHash: hash });
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(3n * USDC);
    // Every run read at most 3 pages of 10 blocks past the previous run's cursor, and never re-read them.
    expect(cursors.length).toBeGreaterThan(0);
    for (let i = 1; i < cursors.length; i++) expect(cursors[i] - cursors[i - 1]).toBeLessThanOrEqual(30n);
    for (let i = 1; i < cursors.length; i++) expect(cursors[i]).toBeGreaterThan(cursors[i - 1]);
    expect(cursors.at(-1)!).toBeLessThan(receipt.blockNumber);
  });
});

async function submitAuthorization(header: string): Promise<Hash> {
  const { payload } = decodePaymentSignatureHeader(header) as unknown as {
    payload: {
      signature: Hex;
      authorization: { from: Address; to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex };
    };
  };
  const a = payload.authorization;
  const { v, r, s } = parseSignature(payload.signature);
  const wallet = createWalletClient({ account: privateKeyToAccount(FUNDER.privateKey), chain: base, transport: http(env.BASE_RPC_URL) });
  return wallet.writeContract({
    address: BASE_USDC_ADDRESS,
    abi: usdcAbi,
    functionName: "transferWithAuthorization",
    args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, Number(v), r, s],
  });
}

describe("background jobs", () => {
  it("run at startup and on demand, one run at a time, logging failures instead of throwing", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = vi.fn(() => gate);
    const failing = vi.fn(async () => {
      throw new Error("boom");
    });
    registerJob("test-slow", 3_600_000, slow);
    registerJob("test-failing", 3_600_000, failing);

    startBackgroundJobs();
    expect(slow).toHaveBeenCalledTimes(1);
    expect(failing).toHaveBeenCalledTimes(1);
    const overlapping = runJob("test-slow");
    expect(slow).toHaveBeenCalledTimes(1);
    release();
    await overlapping;
    await expect(runJob("test-failing")).resolves.toBeUndefined();
    expect(failing).toHaveBeenCalledTimes(2);
    await runJob("test-slow");
    expect(slow).toHaveBeenCalledTimes(2);
    stopBackgroundJobs();
  });
});
