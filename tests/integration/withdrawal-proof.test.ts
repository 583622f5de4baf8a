/**
 * A withdrawal is reversed only on proof that its transfer can never move money: a failed receipt, or its
 * sender's nonce used by another transaction. A send error, or an RPC that does not know the transaction, is no
 * proof (behind a load-balanced RPC the transfer can still be mined): the withdrawal stays pending. On anvil, with
 * a relayer key of this file's own, so no other test file's transactions take its nonces.
 */
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  http,
  keccak256,
  maxUint256,
  parseAbi,
  parseEther,
  type Hash,
  type Hex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { BASE_USDC_ADDRESS, getDevAccount } from "@/lib/chain/constants";
import { usdcAbi } from "@/lib/chain/usdc-abi";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { seedDebitedWithdrawal, seedSupplierEarnings } from "../helpers/ledger-factories";
import { treasuryAddress, treasuryWallet } from "../helpers/treasury";
import { readUsdcBalance } from "../helpers/x402-client";

const USDC = 1_000_000n;
const relayerKey = generatePrivateKey();
const relayer = privateKeyToAccount(relayerKey);
const transport = http(env.BASE_RPC_URL);
const chain = createPublicClient({ chain: base, transport });
const anvil = createTestClient({ mode: "anvil", chain: base, transport });

type App = {
  withdraw: (req: Request) => Promise<Response>;
  earnings: (req: Request) => Promise<Response>;
  reconcile: typeof import("@/lib/payments/withdrawals").reconcileWithdrawals;
  faults: typeof import("@/lib/payments/faults").faults;
};
let app: App;

beforeAll(async () => {
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
  const [route, earningsRoute, withdrawals, faults] = await Promise.all([
    import("@/app/v1/supply/withdrawals/route"),
    import("@/app/v1/supply/earnings/route"),
    import("@/lib/payments/withdrawals"),
    import("@/lib/payments/faults"),
  ]);
  app = { withdraw: route.POST, earnings: earningsRoute.GET, reconcile: withdrawals.reconcileWithdrawals, faults: faults.faults };
});

afterEach(() => {
  delete app.faults.beforeBroadcast;
});

afterAll(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

async function seedSupplier(earnings: bigint) {
  const supplier = await seedSignedInAccount();
  await seedSupplierEarnings(supplier.id, earnings);
  return supplier;
}

async function readEarnings(cookie: string) {
  return (await app.earnings(jsonRequest("GET", "/v1/supply/earnings", undefined, { cookie }))).json();
}

const withdraw = (cookie: string, amount: string) => app.withdraw(jsonRequest("POST", "/v1/supply/withdrawals", { amount }, { cookie }));
const relayerNonce = () => chain.getTransactionCount({ address: relayer.address });
/** Buries the latest blocks deep enough for a nonce count to be proof (lib/payments/withdrawals.ts). */
const bury = () => anvil.mine({ blocks: 12 });
/** Makes a pending withdrawal old, as if the RPC had not known its transaction for half an hour. */
const age = (id: string) => db.withdrawal.update({ where: { id }, data: { createdAt: new Date(Date.now() - 30 * 60_000) } });

describe("sending a withdrawal", () => {
  it("pays once when its own broadcast already reached the node (a lost answer): it is never signed again with another nonce", async () => {
    const supplier = await seedSupplier(4n * USDC);
    const nonceBefore = await relayerNonce();
    // An earlier attempt of this very transaction reached the node; the send then hears "nonce too low".
    app.faults.beforeBroadcast = async (raw) => {
      await chain.sendRawTransaction({ serializedTransaction: raw });
    };

    const res = await withdraw(supplier.cookie, "4.00");

    expect(res.status).toBe(201);
    expect(((await res.json()) as { status: string }).status).toBe("sent");
    expect(await readUsdcBalance(supplier.walletAddress as Hex)).toBe(4n * USDC);
    expect(await relayerNonce()).toBe(nonceBefore + 1);
  });

  it("stays pending on a send error after signing, and is completed when the transfer is mined after all", async () => {
    const supplier = await seedSupplier(3n * USDC);
    let signed: Hex | undefined;
    app.faults.beforeBroadcast = async (raw) => {
      signed = raw;
      throw new Error("socket hang up");
    };

    const res = await withdraw(supplier.cookie, "3.00");

    expect(res.status).toBe(502);
    expect((await readError(res)).code).toBe("withdrawal_pending");
    const withdrawal = await db.withdrawal.findFirstOrThrow({ where: { accountId: supplier.id } });
    expect(withdrawal).toMatchObject({ status: "pending", txFrom: relayer.address, txNonce: expect.any(Number) });
    await age(withdrawal.id);

    // The RPC does not know the transaction, and its nonce is unused: no proof of anything, it stays pending.
    await bury();
    await app.reconcile({ graceMs: 0, accountId: supplier.id });
    expect((await db.withdrawal.findUniqueOrThrow({ where: { id: withdrawal.id } })).status).toBe("pending");
    expect(await readEarnings(supplier.cookie)).toMatchObject({ available: "0.000000", pending: "3.000000" });

    // It reaches the chain late (another node had it): the withdrawal completes, paid once.
    await chain.waitForTransactionReceipt({ hash: await chain.sendRawTransaction({ serializedTransaction: signed! }) });
    await app.reconcile({ graceMs: 0, accountId: supplier.id });
    expect((await db.withdrawal.findUniqueOrThrow({ where: { id: withdrawal.id } })).status).toBe("sent");
    expect(await readUsdcBalance(supplier.walletAddress as Hex)).toBe(3n * USDC);
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "0.000000", withdrawn: "3.000000", pending: "0.000000" });
  });

  it("is reversed once another transaction of the relayer has used its nonce, buried a few blocks deep", async () => {
    const supplier = await seedSupplier(2n * USDC);
    app.faults.beforeBroadcast = async () => {
      throw new Error("read ECONNRESET");
    };
    expect((await withdraw(supplier.cookie, "2.00")).status).toBe(502);
    delete app.faults.beforeBroadcast;
    const withdrawal = await db.withdrawal.findFirstOrThrow({ where: { accountId: supplier.id } });

    // Another transaction takes the nonce (a replacement at the same nonce).
    const wallet = createWalletClient({ account: relayer, chain: base, transport });
    const other = await wallet.sendTransaction({ to: relayer.address, value: 0n, nonce: withdrawal.txNonce! });
    await chain.waitForTransactionReceipt({ hash: other });

    await bury();
    await app.reconcile({ graceMs: 0, accountId: supplier.id });
    const reversed = await db.withdrawal.findUniqueOrThrow({ where: { id: withdrawal.id } });
    expect(reversed.status).toBe("failed");
    expect(reversed.failureReason).toMatch(new RegExp(`nonce ${withdrawal.txNonce} .* used by another transaction`));
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "2.000000", withdrawn: "0.000000", pending: "0.000000" });
    expect(await readUsdcBalance(supplier.walletAddress as Hex)).toBe(0n);
  });

  it("is reversed on a failed receipt", async () => {
    const supplier = await seedSupplier(5n * USDC);
    const admin = createWalletClient({ account: privateKeyToAccount(getDevAccount("usdcAdmin").privateKey), chain: base, transport });
    // Signed with a good gas estimate; the recipient is blacklisted before it is mined, so it reverts on chain.
    app.faults.beforeBroadcast = async () => {
      const hash = await admin.writeContract({
        address: BASE_USDC_ADDRESS,
        abi: parseAbi(["function blacklist(address account)"]),
        functionName: "blacklist",
        args: [supplier.walletAddress as Hex],
      });
      await chain.waitForTransactionReceipt({ hash });
    };

    const res = await withdraw(supplier.cookie, "5.00");

    expect(res.status).toBe(502);
    expect((await readError(res)).code).toBe("withdrawal_failed");
    const withdrawal = await db.withdrawal.findFirstOrThrow({ where: { accountId: supplier.id } });
    expect((await chain.getTransactionReceipt({ hash: withdrawal.txHash as Hash })).status).toBe("reverted");
    expect(await readEarnings(supplier.cookie)).toEqual({ available: "5.000000", withdrawn: "0.000000", pending: "0.000000" });
  });
});

describe("withdrawal reconciliation", () => {
  it("never reverses a withdrawal only because the RPC does not know its transaction, however old", async () => {
    const supplier = await seedSupplier(1n * USDC);
    // A transfer signed at a nonce the relayer has not reached: no node knows it, nothing has used its nonce.
    const nonce = (await relayerNonce()) + 1000;
    const wallet = createWalletClient({ account: relayer, chain: base, transport });
    const request = await wallet.prepareTransactionRequest({
      to: BASE_USDC_ADDRESS,
      data: encodeFunctionData({
        abi: usdcAbi,
        functionName: "transferFrom",
        args: [treasuryAddress, supplier.walletAddress as Hex, USDC],
      }),
      nonce,
      gas: 100_000n,
    });
    const hash = keccak256(await wallet.signTransaction(request));
    const earningsBefore = await readEarnings(supplier.cookie);
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
    expect(earningsBefore).toMatchObject({ available: "1.000000" });
    await age(withdrawal.id);
    await bury();

    await app.reconcile({ graceMs: 0, accountId: supplier.id });

    expect((await db.withdrawal.findUniqueOrThrow({ where: { id: withdrawal.id } })).status).toBe("pending");
    expect(await readEarnings(supplier.cookie)).toMatchObject({ available: "0.000000", pending: "1.000000" });
  });
});
