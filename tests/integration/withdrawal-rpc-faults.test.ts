/**
 * A withdrawal is never paid twice because the RPC failed. The app talks to the chain through an RPC proxy
 * (tests/helpers/rpc-fault-proxy.ts) that fails receipt lookups (429, a timeout, 503, a JSON-RPC error) in the middle
 * of a withdrawal and of its reconciliation; what was paid is read from the chain itself, past the proxy. The issue's
 * case: a 3.00 withdrawal mined while eth_getTransactionReceipt answered 429 was reversed by reconciliation (the
 * failed lookup read as "no receipt", and the nonce the transfer itself used as "used by another transaction"), and a
 * second 3.00 was paid out of 3.97 earned. With a relayer key of this file's own, so no other file takes its nonces.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicClient, createTestClient, createWalletClient, http, maxUint256, parseEther, type Hash, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { BASE_USDC_ADDRESS } from "@/lib/chain/constants";
import { usdcAbi } from "@/lib/chain/usdc-abi";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { seedDebitedWithdrawal, seedSupplierEarnings } from "../helpers/ledger-factories";
import { startRpcFaultProxy, type RpcFault, type RpcFaultProxy } from "../helpers/rpc-fault-proxy";
import { treasuryWallet } from "../helpers/treasury";
import { signPaymentV1 } from "../helpers/x402-client";

const USDC = 1_000_000n;
/** The app's RPC calls time out after this (RPC_TIMEOUT_MS): a call the proxy holds fails then, on the app's side. */
const RPC_TIMEOUT_MS = 2_500;
const relayerKey = generatePrivateKey();
const relayer = privateKeyToAccount(relayerKey);
// The test's own view of the chain goes straight to anvil, never through the proxy.
const transport = http(env.BASE_RPC_URL);
const chain = createPublicClient({ chain: base, transport });
const anvil = createTestClient({ mode: "anvil", chain: base, transport });

type App = {
  withdraw: (req: Request) => Promise<Response>;
  topUp: (req: Request) => Promise<Response>;
  reconcilePayments: typeof import("@/lib/payments/reconcile").reconcilePayments;
  earnings: (req: Request) => Promise<Response>;
  reconcile: typeof import("@/lib/payments/withdrawals").reconcileWithdrawals;
  faults: typeof import("@/lib/payments/faults").faults;
};
let app: App;
let rpc: RpcFaultProxy;
let metricsServer: Server;

beforeAll(async () => {
  rpc = await startRpcFaultProxy(env.BASE_RPC_URL);
  await anvil.setBalance({ address: relayer.address, value: parseEther("10") });
  const approval = await (
    await treasuryWallet()
  ).writeContract({
    address: BASE_USDC_ADDRESS,
    abi: usdcAbi,
    functionName: "approve",
    args: [relayer.address, maxUint256],
  });
  await chain.waitForTransactionReceipt({ hash: approval });

  vi.resetModules();
  vi.stubEnv("RELAYER_PRIVATE_KEY", relayerKey);
  vi.stubEnv("BASE_RPC_URL", rpc.url);
  vi.stubEnv("RPC_TIMEOUT_MS", String(RPC_TIMEOUT_MS));
  // The stuck-withdrawal log line is what an operator alerts on: error lines are kept (and not printed) per test.
  vi.stubEnv("LOG_LEVEL", "error");
  const [route, earningsRoute, withdrawals, faults, metrics, topUpRoute, payments] = await Promise.all([
    import("@/app/v1/supply/withdrawals/route"),
    import("@/app/v1/supply/earnings/route"),
    import("@/lib/payments/withdrawals"),
    import("@/lib/payments/faults"),
    import("@/lib/ops/metrics"),
    import("@/app/v1/x402/top-up/route"),
    import("@/lib/payments/reconcile"),
  ]);
  app = {
    withdraw: route.POST,
    topUp: topUpRoute.POST,
    reconcilePayments: payments.reconcilePayments,
    earnings: earningsRoute.GET,
    reconcile: withdrawals.reconcileWithdrawals,
    faults: faults.faults,
  };
  metricsServer = createServer((req, res) => void metrics.serveMetrics(req, res));
  await new Promise<void>((resolve) => metricsServer.listen(0, "127.0.0.1", resolve));
});

let logged: string[] = [];
beforeEach(() => {
  logged = [];
  vi.spyOn(process.stderr, "write").mockImplementation(((line: string | Uint8Array) => {
    logged.push(String(line));
    return true;
  }) as typeof process.stderr.write);
});

afterEach(() => {
  vi.restoreAllMocks();
  rpc.heal();
  rpc.release();
  delete app.faults.beforeBroadcast;
  delete app.faults.beforeReceipt;
});

afterAll(async () => {
  await rpc.close();
  await new Promise((resolve) => metricsServer.close(resolve));
  vi.unstubAllEnvs();
  vi.resetModules();
});

async function seedSupplier(earnings: bigint) {
  const supplier = await seedSignedInAccount();
  await seedSupplierEarnings(supplier.id, earnings);
  return supplier;
}

const withdraw = (cookie: string, amount: string) => app.withdraw(jsonRequest("POST", "/v1/supply/withdrawals", { amount }, { cookie }));
const readEarnings = async (cookie: string) =>
  (await app.earnings(jsonRequest("GET", "/v1/supply/earnings", undefined, { cookie }))).json();
/** USDC the supplier's wallet holds: what the chain has paid out, read past the proxy. */
const paidOut = (wallet: string) =>
  chain.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: "balanceOf", args: [wallet as Hex] });
const statusOf = async (id: string) => (await db.withdrawal.findUniqueOrThrow({ where: { id } })).status;
/** Buries the latest blocks deep enough for a nonce to count as proof (NONCE_PROOF_CONFIRMATIONS). */
const bury = () => anvil.mine({ blocks: 12 });
/** Makes a pending withdrawal old, as if the RPC had failed for half an hour. */
const age = (id: string) => db.withdrawal.update({ where: { id }, data: { createdAt: new Date(Date.now() - 30 * 60_000) } });
const receiptOf = (hash: string) => (params: unknown[]) => String(params[0]).toLowerCase() === hash.toLowerCase();

describe("a withdrawal while the RPC fails receipt lookups", () => {
  it.each<[string, RpcFault]>([
    ["429", "http_429"],
    ["a timeout", "hang"],
    ["503", "http_503"],
    ["a JSON-RPC error", "rpc_error"],
  ])(
    "is paid once with %s on every eth_getTransactionReceipt: reconciliation leaves it pending, a second withdrawal is refused",
    { timeout: 60_000 },
    async (_name, fault) => {
      const supplier = await seedSupplier(3_970_000n);
      rpc.fail("eth_getTransactionReceipt", fault);

      // The transfer goes out and is mined; only its confirmation cannot be read.
      const first = await withdraw(supplier.cookie, "3.00");
      expect(first.status).toBe(502);
      expect((await readError(first)).code).toBe("withdrawal_pending");
      expect(await paidOut(supplier.walletAddress)).toBe(3n * USDC);
      const withdrawal = await db.withdrawal.findFirstOrThrow({ where: { accountId: supplier.id } });
      expect((await chain.getTransactionReceipt({ hash: withdrawal.txHash as Hash })).status).toBe("success");

      // Reconciliation runs during the faults, with the transfer's nonce buried deep: no proof of anything.
      await age(withdrawal.id);
      await bury();
      const faultedBefore = rpc.calls("eth_getTransactionReceipt").faulted;
      const report = await app.reconcile({ graceMs: 0, accountId: supplier.id });
      expect(rpc.calls("eth_getTransactionReceipt").faulted).toBeGreaterThan(faultedBefore);
      expect(report).toMatchObject({ examined: 1, pending: 1, reversed: 0 });
      expect(await statusOf(withdrawal.id)).toBe("pending");
      expect(await readEarnings(supplier.cookie)).toEqual({ available: "0.970000", withdrawn: "0.000000", pending: "3.000000" });

      // A second withdrawal of the same earnings is refused: the chain never pays more than was earned.
      const second = await withdraw(supplier.cookie, "3.00");
      expect(second.status).toBe(409);
      expect((await readError(second)).code).toBe("insufficient_earnings");
      expect(await paidOut(supplier.walletAddress)).toBe(3n * USDC);

      // The RPC recovers: the transfer's receipt completes the withdrawal.
      rpc.heal();
      rpc.release();
      expect(await app.reconcile({ graceMs: 0, accountId: supplier.id })).toMatchObject({ sent: 1 });
      expect(await statusOf(withdrawal.id)).toBe("sent");
      expect(await readEarnings(supplier.cookie)).toEqual({ available: "0.970000", withdrawn: "3.000000", pending: "0.000000" });
      expect(await paidOut(supplier.walletAddress)).toBe(3n * USDC);
    },
  );
});

describe("reconciliation's proof that a nonce was taken", () => {
  it.each([
    ["eth_getTransactionBySenderAndNonce", false],
    ["the block that used the nonce, where the RPC lacks that method", true],
  ])(
    "does not reverse a mined transfer the RPC answers 'no receipt' for: the nonce's holder, found by %s, is the transfer itself",
    async (_how, noSenderNonceMethod) => {
      const supplier = await seedSupplier(2n * USDC);
      app.faults.beforeReceipt = async () => {
        throw new Error("read ECONNRESET");
      };
      expect((await withdraw(supplier.cookie, "2.00")).status).toBe(502);
      const withdrawal = await db.withdrawal.findFirstOrThrow({ where: { accountId: supplier.id } });
      expect(await paidOut(supplier.walletAddress)).toBe(2n * USDC);

      // A node behind the load balancer that lags, or prunes its transaction index: "no receipt" for a mined transfer.
      rpc.fail("eth_getTransactionReceipt", "null", receiptOf(withdrawal.txHash!));
      if (noSenderNonceMethod) rpc.fail("eth_getTransactionBySenderAndNonce", "method_not_found");
      await age(withdrawal.id);
      await bury();
      expect(await app.reconcile({ graceMs: 0, accountId: supplier.id })).toMatchObject({ pending: 1, reversed: 0 });
      expect(await statusOf(withdrawal.id)).toBe("pending");
      expect(await readEarnings(supplier.cookie)).toMatchObject({ available: "0.000000", pending: "2.000000" });

      rpc.heal();
      await app.reconcile({ graceMs: 0, accountId: supplier.id });
      expect(await statusOf(withdrawal.id)).toBe("sent");
      expect(await paidOut(supplier.walletAddress)).toBe(2n * USDC);
    },
  );

  it("reverses only once the other transaction at the nonce is identified and its own receipt fetched (found by the block search)", async () => {
    const supplier = await seedSupplier(2n * USDC);
    app.faults.beforeBroadcast = async () => {
      throw new Error("socket hang up");
    };
    expect((await withdraw(supplier.cookie, "2.00")).status).toBe(502);
    delete app.faults.beforeBroadcast;
    const withdrawal = await db.withdrawal.findFirstOrThrow({ where: { accountId: supplier.id } });

    // Another transaction of the relayer takes the nonce; blocks pass before reconciliation looks.
    const wallet = createWalletClient({ account: relayer, chain: base, transport });
    const other = await wallet.sendTransaction({ to: relayer.address, value: 0n, nonce: withdrawal.txNonce! });
    await chain.waitForTransactionReceipt({ hash: other });
    await anvil.mine({ blocks: 40 });
    await bury();
    await age(withdrawal.id);

    // The RPC has no eth_getTransactionBySenderAndNonce, and rate-limits the other transaction's receipt: no proof.
    rpc.fail("eth_getTransactionBySenderAndNonce", "method_not_found");
    rpc.fail("eth_getTransactionReceipt", "http_429", receiptOf(other));
    expect(await app.reconcile({ graceMs: 0, accountId: supplier.id })).toMatchObject({ pending: 1, reversed: 0 });
    expect(await statusOf(withdrawal.id)).toBe("pending");

    // Its receipt is read: proof. The search costs a few count reads, not one per block.
    rpc.heal("eth_getTransactionReceipt");
    const countsBefore = rpc.calls("eth_getTransactionCount").total;
    expect(await app.reconcile({ graceMs: 0, accountId: supplier.id })).toMatchObject({ reversed: 1 });
    expect(rpc.calls("eth_getTransactionCount").total - countsBefore).toBeLessThanOrEqual(16);
    const reversed = await db.withdrawal.findUniqueOrThrow({ where: { id: withdrawal.id } });
    expect(reversed.status).toBe("failed");
    expect(reversed.failureReason).toContain(`used by another transaction, ${other}`);
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "2.000000", withdrawn: "0.000000", pending: "0.000000" });
    expect(await paidOut(supplier.walletAddress)).toBe(0n);
  });
});

describe("the relayer", () => {
  it("never signs a transfer again with a new nonce when the RPC cannot say whether the first one is known", async () => {
    const supplier = await seedSupplier(4n * USDC);
    const nonceBefore = await chain.getTransactionCount({ address: relayer.address });
    // The first broadcast reached the chain (its answer was lost); the retry then hears "nonce too low", and the
    // lookup of whether the node has our transaction is rate-limited.
    let broadcasts = 0;
    app.faults.beforeBroadcast = async (raw) => {
      if (broadcasts++ === 0)
        await chain.waitForTransactionReceipt({ hash: await chain.sendRawTransaction({ serializedTransaction: raw }) });
    };
    rpc.fail("eth_getTransactionByHash", "http_429");

    const res = await withdraw(supplier.cookie, "4.00");

    expect(rpc.calls("eth_getTransactionByHash").faulted).toBeGreaterThan(0);
    expect(res.status).toBe(502);
    expect((await readError(res)).code).toBe("withdrawal_pending");
    expect(await paidOut(supplier.walletAddress)).toBe(4n * USDC);
    expect(await chain.getTransactionCount({ address: relayer.address })).toBe(nonceBefore + 1);

    rpc.heal();
    const withdrawal = await db.withdrawal.findFirstOrThrow({ where: { accountId: supplier.id } });
    await app.reconcile({ graceMs: 0, accountId: supplier.id });
    expect(await statusOf(withdrawal.id)).toBe("sent");
    expect(await paidOut(supplier.walletAddress)).toBe(4n * USDC);
  });
});

describe("a withdrawal pending too long", () => {
  it("is counted as stuck by reconciliation and shown by svc_withdrawals_oldest_pending_seconds", async () => {
    const supplier = await seedSupplier(1n * USDC);
    // A transfer signed at a nonce the relayer has not reached: nothing will prove it either way.
    const nonce = (await chain.getTransactionCount({ address: relayer.address })) + 1000;
    const hash = `0x${"ab".repeat(32)}` as Hash;
    const withdrawal = await db.$transaction((tx) =>
      seedDebitedWithdrawal(tx, {
        accountId: supplier.id,
        toAddress: supplier.walletAddress,
        amountMicros: USDC,
        txHash: hash,
        txFrom: relayer.address,
        txNonce: nonce,
      }),
    );
    await age(withdrawal.id);
    rpc.fail("eth_getTransactionReceipt", "http_429");

    expect(await app.reconcile({ graceMs: 0, accountId: supplier.id })).toMatchObject({ pending: 1, stuck: 1 });
    const stuck = logged
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((l) => l.message === "withdrawal stuck pending");
    expect(stuck).toMatchObject({
      level: "error",
      withdrawalId: withdrawal.id,
      txHash: hash,
      txNonce: nonce,
      why: expect.stringMatching(/no answer from the chain/),
    });
    expect(stuck!.pendingSeconds).toBeGreaterThanOrEqual(30 * 60 - 5);

    const { port } = metricsServer.address() as AddressInfo;
    const scrape = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${env.METRICS_TOKEN}` } });
    expect(scrape.status).toBe(200);
    const line = (await scrape.text()).split("\n").find((l) => l.startsWith("svc_withdrawals_oldest_pending_seconds "));
    expect(Number(line?.split(" ")[1])).toBeGreaterThanOrEqual(30 * 60 - 5);

    // Nothing proved it either way, so it stays pending; the test ends it as a crash would leave it, never sent.
    await db.withdrawal.update({ where: { id: withdrawal.id }, data: { txHash: null } });
    rpc.heal();
    expect(await app.reconcile({ graceMs: 0, accountId: supplier.id })).toMatchObject({ reversed: 1 });
  });
});

describe("a v1 top-up while the RPC fails receipt lookups", () => {
  it("is left pending, not failed (the buyer is not told to pay again), and credited once the RPC recovers", async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    await chain.waitForTransactionReceipt({
      hash: await (
        await treasuryWallet()
      ).writeContract({
        address: BASE_USDC_ADDRESS,
        abi: usdcAbi,
        functionName: "transfer",
        args: [payer.address, 5n * USDC],
      }),
    });
    const buyer = await seedSignedInAccount(payer);
    const topUp = (headers: Record<string, string> = {}) =>
      app.topUp(jsonRequest("POST", "/v1/x402/top-up", { amount: "5.00" }, { cookie: buyer.cookie, ...headers }));
    const challenge = await topUp();
    expect(challenge.status).toBe(402);
    const { accepts } = (await challenge.json()) as { accepts: Record<string, unknown>[] };
    rpc.fail("eth_getTransactionReceipt", "http_429");

    const res = await topUp({ "x-payment": await signPaymentV1(payer, accepts[0]) });

    expect(rpc.calls("eth_getTransactionReceipt").faulted).toBeGreaterThan(0);
    expect((await readError(res)).code).toBe("payment_pending");
    expect(await paidOut(payer.address)).toBe(0n);
    const payment = await db.payment.findFirstOrThrow({ where: { accountId: buyer.id } });
    expect(payment).toMatchObject({ status: "pending", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });

    // While receipts fail, reconciliation concludes nothing (and reads no logs in their place).
    const logReads = rpc.calls("eth_getLogs").total;
    expect(await app.reconcilePayments({ graceMs: 0, accountId: buyer.id })).toMatchObject({ unresolved: 1, credited: 0, failed: 0 });
    expect(rpc.calls("eth_getLogs").total).toBe(logReads);

    rpc.heal();
    expect(await app.reconcilePayments({ graceMs: 0, accountId: buyer.id })).toMatchObject({ credited: 1 });
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ status: "settled", txHash: payment.txHash });
  });
});
