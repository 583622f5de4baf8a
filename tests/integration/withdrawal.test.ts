import { createWalletClient, http, parseAbi, parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { afterEach, describe, expect, it } from "vitest";
import { GET as getEarningsRoute } from "@/app/v1/supply/earnings/route";
import { GET as listWithdrawalsRoute, POST as postWithdrawalRoute } from "@/app/v1/supply/withdrawals/route";
import { publicClient } from "@/lib/chain/client";
import { BASE_USDC_ADDRESS, getDevAccount } from "@/lib/chain/constants";
import { usdcAbi } from "@/lib/chain/usdc-abi";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { faults } from "@/lib/payments/faults";
import { reconcileWithdrawals } from "@/lib/payments/withdrawals";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { seedDebitedWithdrawal, seedSupplierEarnings } from "../helpers/ledger-factories";
import { treasuryAddress } from "../helpers/treasury";
import { readUsdcBalance } from "../helpers/x402-client";

const USDC = 1_000_000n;

afterEach(() => {
  delete faults.beforeReceipt;
});

async function seedSupplier(earnings: bigint) {
  const supplier = await seedSignedInAccount();
  await seedSupplierEarnings(supplier.id, earnings);
  return supplier;
}

function withdraw(cookie: string, body: unknown) {
  return postWithdrawalRoute(jsonRequest("POST", "/v1/supply/withdrawals", body, { cookie }));
}

async function readEarnings(cookie: string) {
  const res = await getEarningsRoute(jsonRequest("GET", "/v1/supply/earnings", undefined, { cookie }));
  expect(res.status).toBe(200);
  return res.json();
}

describe("POST /v1/supply/withdrawals", () => {
  it("sends real USDC from the treasury to the signed-in wallet and lowers the earnings by the amount", async () => {
    const supplier = await seedSupplier(30n * USDC);
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "30.000000", withdrawn: "0.000000", pending: "0.000000" });
    const walletBefore = await readUsdcBalance(supplier.walletAddress as `0x${string}`);

    const res = await withdraw(supplier.cookie, { amount: "12.50" });

    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, string>;
    expect(body).toMatchObject({ amount: "12.500000", to_address: supplier.walletAddress, status: "sent", failure_reason: null });
    const receipt = await publicClient.getTransactionReceipt({ hash: body.transaction as `0x${string}` });
    expect(receipt.status).toBe("success");
    expect(await readUsdcBalance(supplier.walletAddress as `0x${string}`)).toBe(walletBefore + 12_500_000n);
    // From the treasury, by the transfer itself (other test files move the treasury's USDC in parallel).
    const transfers = parseEventLogs({ abi: usdcAbi, eventName: "Transfer", logs: receipt.logs });
    expect(transfers.map((t) => t.args)).toEqual([{ from: treasuryAddress, to: supplier.walletAddress, value: 12_500_000n }]);
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "17.500000", withdrawn: "12.500000", pending: "0.000000" });

    const list = await listWithdrawalsRoute(jsonRequest("GET", "/v1/supply/withdrawals", undefined, { cookie: supplier.cookie }));
    expect(((await list.json()) as { data: unknown[] }).data).toEqual([body]);
  });

  it("with an Idempotency-Key: sent again (a lost answer, or twice at once) it answers the one withdrawal it made", async () => {
    const supplier = await seedSupplier(10n * USDC);
    const walletBefore = await readUsdcBalance(supplier.walletAddress as `0x${string}`);
    const key = `wd-${Date.now()}`;
    const send = () =>
      postWithdrawalRoute(
        jsonRequest("POST", "/v1/supply/withdrawals", { amount: "3.00" }, { cookie: supplier.cookie, "idempotency-key": key }),
      );
    const lookup = async (k: string) => {
      const res = await listWithdrawalsRoute(
        jsonRequest("GET", `/v1/supply/withdrawals?idempotency_key=${k}`, undefined, { cookie: supplier.cookie }),
      );
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: Record<string, unknown>[] }).data;
    };
    // Before it arrives, svc knows of none: the client may send it (again).
    expect(await lookup(key)).toEqual([]);

    const answers = await Promise.all([send(), send(), send()]);
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201]);
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as { id: string }[];
    expect(new Set(bodies.map((b) => b.id)).size).toBe(1);
    expect(await db.withdrawal.count({ where: { accountId: supplier.id } })).toBe(1);
    const again = await send();
    expect(((await again.json()) as { id: string; status: string }).id).toBe(bodies[0].id);
    expect(await readUsdcBalance(supplier.walletAddress as `0x${string}`)).toBe(walletBefore + 3n * USDC);
    expect(await readEarnings(supplier.cookie)).toMatchObject({ available: "7.000000", withdrawn: "3.000000" });

    const found = await lookup(key);
    expect(found).toEqual([expect.objectContaining({ id: bodies[0].id, amount: "3.000000", status: "sent", idempotency_key: key })]);
    const otherAccount = await seedSupplier(1n * USDC);
    const theirs = await listWithdrawalsRoute(
      jsonRequest("GET", `/v1/supply/withdrawals?idempotency_key=${key}`, undefined, { cookie: otherAccount.cookie }),
    );
    expect(((await theirs.json()) as { data: unknown[] }).data).toEqual([]);

    // The same key for another amount is refused, and a malformed key too; nothing more moves.
    const other = await postWithdrawalRoute(
      jsonRequest("POST", "/v1/supply/withdrawals", { amount: "2.00" }, { cookie: supplier.cookie, "idempotency-key": key }),
    );
    expect(other.status).toBe(400);
    expect((await readError(other)).code).toBe("invalid_request");
    const malformed = await postWithdrawalRoute(
      jsonRequest("POST", "/v1/supply/withdrawals", { amount: "2.00" }, { cookie: supplier.cookie, "idempotency-key": "no spaces" }),
    );
    expect(malformed.status).toBe(400);
    expect(await db.withdrawal.count({ where: { accountId: supplier.id } })).toBe(1);
  });

  it("never takes a destination from the body", async () => {
    const supplier = await seedSupplier(5n * USDC);
    const res = await withdraw(supplier.cookie, { amount: "1.00", to: getDevAccount("demoBuyer").address });
    expect(res.status).toBe(400);
    expect((await readError(res)).code).toBe("unknown_field");
    expect(await db.withdrawal.count({ where: { accountId: supplier.id } })).toBe(0);
  });

  it("refuses more than the available earnings, and less than the minimum", async () => {
    const supplier = await seedSupplier(5n * USDC);
    const tooMuch = await withdraw(supplier.cookie, { amount: "5.000001" });
    expect(tooMuch.status).toBe(409);
    expect(await readError(tooMuch)).toMatchObject({ code: "insufficient_earnings", available: "5.000000" });
    const tooLittle = await withdraw(supplier.cookie, { amount: "0.50" });
    expect(tooLittle.status).toBe(400);
    expect((await readError(tooLittle)).code).toBe("amount_out_of_range");
    const nobody = await seedSignedInAccount();
    expect((await withdraw(nobody.cookie, { amount: "1.00" })).status).toBe(409);
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "5.000000", withdrawn: "0.000000", pending: "0.000000" });
  });

  it("pays out concurrent withdrawals only as far as the earnings go", async () => {
    const supplier = await seedSupplier(25n * USDC);
    const responses = await Promise.all([1, 2, 3].map(() => withdraw(supplier.cookie, { amount: "10.00" })));
    expect(responses.map((r) => r.status).sort()).toEqual([201, 201, 409]);
    expect(await readUsdcBalance(supplier.walletAddress as `0x${string}`)).toBe(20n * USDC);
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "5.000000", withdrawn: "20.000000", pending: "0.000000" });
  });

  it("restores the earnings when the transfer fails", async () => {
    const supplier = await seedSupplier(8n * USDC);
    // USDC refuses transfers to a blacklisted address: a real on-chain refusal of this one wallet.
    const admin = createWalletClient({
      account: privateKeyToAccount(getDevAccount("usdcAdmin").privateKey),
      chain: base,
      transport: http(env.BASE_RPC_URL),
    });
    const hash = await admin.writeContract({
      address: BASE_USDC_ADDRESS,
      abi: parseAbi(["function blacklist(address account)"]),
      functionName: "blacklist",
      args: [supplier.walletAddress as `0x${string}`],
    });
    await publicClient.waitForTransactionReceipt({ hash });

    const res = await withdraw(supplier.cookie, { amount: "8.00" });

    expect(res.status).toBe(502);
    const error = await readError(res);
    expect(error.code).toBe("withdrawal_failed");
    expect(error.message).toMatch(/earnings were restored/);
    expect(await readUsdcBalance(supplier.walletAddress as `0x${string}`)).toBe(0n);
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "8.000000", withdrawn: "0.000000", pending: "0.000000" });
    const withdrawal = await db.withdrawal.findFirstOrThrow({ where: { accountId: supplier.id } });
    expect(withdrawal.status).toBe("failed");
    const kinds = await db.journalEntry.findMany({
      where: { withdrawalId: withdrawal.id },
      orderBy: { createdAt: "asc" },
      select: { kind: true },
    });
    expect(kinds.map((k) => k.kind)).toEqual(["withdrawal", "withdrawal_reversal"]);
  });
});

describe("withdrawal reconciliation", () => {
  it("completes a withdrawal whose confirmation was lost, from the chain", async () => {
    const supplier = await seedSupplier(6n * USDC);
    faults.beforeReceipt = async () => {
      throw new Error("fetch failed: socket hang up");
    };
    const res = await withdraw(supplier.cookie, { amount: "6.00" });
    delete faults.beforeReceipt;

    expect(res.status).toBe(502);
    expect((await readError(res)).code).toBe("withdrawal_pending");
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "0.000000", withdrawn: "0.000000", pending: "6.000000" });

    await reconcileWithdrawals({ graceMs: 0, accountId: supplier.id });
    const withdrawal = await db.withdrawal.findFirstOrThrow({ where: { accountId: supplier.id } });
    expect(withdrawal.status).toBe("sent");
    expect(await readUsdcBalance(supplier.walletAddress as `0x${string}`)).toBe(6n * USDC);
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "0.000000", withdrawn: "6.000000", pending: "0.000000" });
  });

  it("reverses a withdrawal that was debited but never sent", async () => {
    const supplier = await seedSupplier(3n * USDC);
    // What a crash right after the debit leaves: the withdrawal entry, no transaction hash.
    await db.$transaction((tx) =>
      seedDebitedWithdrawal(tx, { accountId: supplier.id, toAddress: supplier.walletAddress, amountMicros: 3n * USDC }),
    );
    expect(await readEarnings(supplier.cookie)).toMatchObject({ available: "0.000000", pending: "3.000000" });

    await reconcileWithdrawals({ graceMs: 0, accountId: supplier.id });
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "3.000000", withdrawn: "0.000000", pending: "0.000000" });
    expect((await db.withdrawal.findFirstOrThrow({ where: { accountId: supplier.id } })).failureReason).toBe("transfer never sent");
  });
});
