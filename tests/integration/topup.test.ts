import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { createTestClient, http, parseAbi, parseEther, type Hash } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { afterEach, describe, expect, it } from "vitest";
import { getAddress } from "viem";
import { publicClient, relayerAccount } from "@/lib/chain/client";
import { ANVIL_DEV_ACCOUNTS, BASE_USDC_ADDRESS } from "@/lib/chain/constants";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { getBalance } from "@/lib/ledger/accounts";
import { faults } from "@/lib/payments/faults";
import { seedSignedInAccount } from "../helpers/factories";
import { readError } from "../helpers/http";
import {
  TOP_UP_URL,
  fundedPayer,
  nonceOf,
  postTopUp,
  readChallenge,
  readTopUpStatus,
  readUsdcBalance,
  routeFetch,
  signPaymentV1,
  signPaymentV2,
  transferUsdc,
} from "../helpers/x402-client";

const USDC = 1_000_000n;
// The run's own treasury (tests/setup/global.ts generates it, as a dev install does).
const TREASURY = getAddress(env.TREASURY_ADDRESS);
// Dev accounts 4 and 5 are this file's: 4 pays through the official client, 5 funds fresh payer wallets.
const E2E_PAYER = ANVIL_DEV_ACCOUNTS[4];
const FUNDER = ANVIL_DEV_ACCOUNTS[5];

afterEach(() => {
  delete faults.topUpBeforeSettle;
});

type TopUpBody = { credited: string; balance: string; transaction: Hash };

describe("POST /v1/x402/top-up with the official x402 client", () => {
  it("answers 402, gets paid automatically, moves the USDC on chain and credits exactly the amount", async () => {
    const signer = privateKeyToAccount(E2E_PAYER.privateKey);
    const me = await seedSignedInAccount(signer);
    const client = new x402Client().setSpendControls({ maxAmountPerPayment: "$100" });
    registerExactEvmScheme(client, { signer });
    const seen: number[] = [];
    const dispatch = routeFetch(me.cookie);
    const pay = wrapFetchWithPayment(async (input, init) => {
      const res = await dispatch(input, init);
      seen.push(res.status);
      return res;
    }, client);
    const payerBefore = await readUsdcBalance(signer.address);

    const res = await pay(TOP_UP_URL, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ amount: "25.00" }),
    });

    expect(seen).toEqual([402, 200]);
    expect(res.status).toBe(200);
    const body = (await res.json()) as TopUpBody;
    expect(body).toEqual({ credited: "25.000000", balance: "25.000000", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const settlement = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    expect(settlement).toMatchObject({ success: true, transaction: body.transaction, network: "eip155:8453", payer: signer.address });

    const receipt = await publicClient.getTransactionReceipt({ hash: body.transaction });
    expect(receipt.status).toBe("success");
    expect(receipt.from.toLowerCase()).toBe(relayerAccount.address.toLowerCase());
    expect(await readUsdcBalance(signer.address)).toBe(payerBefore - 25n * USDC);
    const treasuryBefore = await readUsdcBalance(TREASURY, receipt.blockNumber - 1n);
    expect(await readUsdcBalance(TREASURY, receipt.blockNumber)).toBe(treasuryBefore + 25n * USDC);

    expect(await getBalance("buyer", me.id)).toMatchObject({ totalMicros: 25n * USDC, availableMicros: 25n * USDC });
    const payment = await db.payment.findFirstOrThrow({ where: { accountId: me.id } });
    expect(payment).toMatchObject({
      status: "settled",
      txHash: body.transaction,
      payer: signer.address,
      amountMicros: 25n * USDC,
      x402Version: 2,
    });
  });
});

describe("POST /v1/x402/top-up: the challenge", () => {
  it("asks for exactly the amount in USDC on Base, to the treasury, in the v2 header and the v1 body", async () => {
    const me = await seedSignedInAccount();
    const res = await postTopUp(me.cookie, "10.00");
    expect(res.status).toBe(402);
    expect(res.headers.get("cache-control")).toBe("no-store");

    const required = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(TOP_UP_URL);
    expect(required.accepts).toEqual([
      {
        scheme: "exact",
        network: "eip155:8453",
        asset: BASE_USDC_ADDRESS,
        amount: "10000000",
        payTo: TREASURY,
        maxTimeoutSeconds: env.X402_MAX_TIMEOUT_SECONDS,
        extra: { name: "USD Coin", version: "2", payer: me.walletAddress },
      },
    ]);
    const v1 = (await res.json()) as { x402Version: number; error: string; accepts: Record<string, unknown>[] };
    expect(v1.x402Version).toBe(1);
    expect(v1.accepts).toEqual([
      expect.objectContaining({
        scheme: "exact",
        network: "base",
        maxAmountRequired: "10000000",
        asset: BASE_USDC_ADDRESS,
        payTo: TREASURY,
      }),
    ]);
  });

  it("validates the amount: a decimal string between the bounds", async () => {
    const me = await seedSignedInAccount();
    const cases: [unknown, number, string][] = [
      ["0.99", 400, "amount_out_of_range"],
      ["10000.000001", 400, "amount_out_of_range"],
      ["1e3", 400, "invalid_amount"],
      ["-5", 400, "invalid_amount"],
      ["1.0000001", 400, "invalid_amount"],
      [10, 400, "invalid_request"],
    ];
    for (const [amount, status, code] of cases) {
      const res = await postTopUp(me.cookie, amount as string);
      expect(res.status, String(amount)).toBe(status);
      expect((await readError(res)).code, String(amount)).toBe(code);
    }
    expect((await postTopUp(me.cookie, "1.00")).status).toBe(402);
    expect((await postTopUp(me.cookie, "10000.00")).status).toBe(402);
  });

  it("needs a signed-in session", async () => {
    const res = await postTopUp("", "10.00");
    expect(res.status).toBe(401);
    expect((await readError(res)).code).toBe("session_required");
  });
});

describe("POST /v1/x402/top-up: paying", () => {
  it("accepts a v1 X-PAYMENT and answers with PAYMENT-RESPONSE and X-PAYMENT-RESPONSE", async () => {
    const payer = await fundedPayer(FUNDER, 3n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v1 } = await readChallenge(me.cookie, "3.00");
    const header = await signPaymentV1(payer, v1.accepts[0]);

    const res = await postTopUp(me.cookie, "3.00", { "x-payment": header });

    expect(res.status).toBe(200);
    expect(((await res.json()) as TopUpBody).credited).toBe("3.000000");
    expect(decodePaymentResponseHeader(res.headers.get("x-payment-response")!)).toMatchObject({ success: true, network: "base" });
    expect(await readUsdcBalance(payer.address)).toBe(0n);
    expect((await db.payment.findFirstOrThrow({ where: { accountId: me.id } })).x402Version).toBe(1);
  });

  it("never credits a replayed authorization twice", async () => {
    const payer = await fundedPayer(FUNDER, 10n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v2 } = await readChallenge(me.cookie, "4.00");
    const header = await signPaymentV2(payer, v2.accepts[0]);

    expect((await postTopUp(me.cookie, "4.00", { "payment-signature": header })).status).toBe(200);
    const replay = await postTopUp(me.cookie, "4.00", { "payment-signature": header });

    expect(replay.status).toBe(409);
    expect((await readError(replay)).code).toBe("authorization_already_used");
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(4n * USDC);
    expect(await readUsdcBalance(payer.address)).toBe(6n * USDC);
  });

  it("credits one of ten parallel submissions of one authorization and refuses the rest clearly", async () => {
    const payer = await fundedPayer(FUNDER, 10n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v2 } = await readChallenge(me.cookie, "7.00");
    const header = await signPaymentV2(payer, v2.accepts[0]);

    const responses = await Promise.all(Array.from({ length: 10 }, () => postTopUp(me.cookie, "7.00", { "payment-signature": header })));

    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const res of responses.filter((r) => r.status === 409)) {
      expect((await readError(res)).code).toBe("authorization_already_used");
    }
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(7n * USDC);
    expect(await db.payment.count({ where: { accountId: me.id } })).toBe(1);
    expect(await db.journalEntry.count({ where: { payment: { accountId: me.id } } })).toBe(1);
    expect(await readUsdcBalance(payer.address)).toBe(3n * USDC);
  });

  it("refuses a payment for another amount than the request asks for", async () => {
    const payer = await fundedPayer(FUNDER, 10n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v2 } = await readChallenge(me.cookie, "5.00");
    const header = await signPaymentV2(payer, v2.accepts[0]);

    const res = await postTopUp(me.cookie, "9.00", { "payment-signature": header });

    await expectPaymentInvalid(res, "amount_mismatch", "9000000");
    await expectNothingMoved(me.id, payer.address, 10n * USDC);
  });

  it("refuses an authorization that pays someone other than the treasury", async () => {
    const payer = await fundedPayer(FUNDER, 10n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v2 } = await readChallenge(me.cookie, "5.00");
    const elsewhere = { ...v2.accepts[0], payTo: ANVIL_DEV_ACCOUNTS[7].address };

    const lyingAboutIt = await postTopUp(me.cookie, "5.00", { "payment-signature": await signPaymentV2(payer, elsewhere, v2.accepts[0]) });
    await expectPaymentInvalid(lyingAboutIt, "recipient_mismatch");
    const openly = await postTopUp(me.cookie, "5.00", { "payment-signature": await signPaymentV2(payer, elsewhere) });
    await expectPaymentInvalid(openly, "recipient_mismatch");
    await expectNothingMoved(me.id, payer.address, 10n * USDC);
  });

  it("refuses payments for another chain, whether declared or only signed for", async () => {
    const payer = await fundedPayer(FUNDER, 10n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v2 } = await readChallenge(me.cookie, "5.00");
    const sepolia: PaymentRequirements = { ...v2.accepts[0], network: "eip155:84532" };
    const mainnet: PaymentRequirements = { ...v2.accepts[0], network: "eip155:1" };

    const declared = await postTopUp(me.cookie, "5.00", { "payment-signature": await signPaymentV2(payer, sepolia) });
    await expectPaymentInvalid(declared, "network_mismatch");
    // Claims Base but the EIP-712 signature is bound to chain 1: it cannot move USDC on Base.
    const signedElsewhere = await postTopUp(me.cookie, "5.00", { "payment-signature": await signPaymentV2(payer, mainnet, v2.accepts[0]) });
    await expectPaymentInvalid(signedElsewhere, "invalid_signature");
    await expectNothingMoved(me.id, payer.address, 10n * USDC);
  });

  it("refuses an expired authorization, and one valid for longer than asked", async () => {
    const payer = await fundedPayer(FUNDER, 10n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v2 } = await readChallenge(me.cookie, "5.00");
    const asked = v2.accepts[0];

    const expired = await postTopUp(me.cookie, "5.00", {
      "payment-signature": await signPaymentV2(payer, { ...asked, maxTimeoutSeconds: -30 }, asked),
    });
    await expectPaymentInvalid(expired, "authorization_expired");
    const tooLong = await postTopUp(me.cookie, "5.00", {
      "payment-signature": await signPaymentV2(payer, { ...asked, maxTimeoutSeconds: 86_400 }, asked),
    });
    await expectPaymentInvalid(tooLong, "authorization_validity_too_long");
    await expectNothingMoved(me.id, payer.address, 10n * USDC);
  });

  it("takes an authorization only from the signed-in wallet, and says so in the challenge", async () => {
    const stranger = await fundedPayer(FUNDER, 10n * USDC);
    const me = await seedSignedInAccount();
    const { v2, v1 } = await readChallenge(me.cookie, "5.00");
    expect(v2.accepts[0].extra).toMatchObject({ payer: me.walletAddress });
    expect(v1.accepts[0].extra).toMatchObject({ payer: me.walletAddress });

    // An authorization signed by another wallet for exactly these requirements (collected elsewhere, say).
    const res = await postTopUp(me.cookie, "5.00", { "payment-signature": await signPaymentV2(stranger, v2.accepts[0]) });

    await expectPaymentInvalid(res, "payer_mismatch");
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(0n);
    expect(await db.payment.count({ where: { accountId: me.id } })).toBe(0);
    expect(await readUsdcBalance(stranger.address)).toBe(10n * USDC);
  });

  it("accepts exactly the EIP-3009 payload: any other field (a Permit2 authorization) is refused before anything is recorded", async () => {
    const payer = await fundedPayer(FUNDER, 10n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v2 } = await readChallenge(me.cookie, "5.00");
    const signed = decodePaymentSignatureHeader(await signPaymentV2(payer, v2.accepts[0]));
    const permit2Authorization = {
      from: payer.address,
      permitted: { token: BASE_USDC_ADDRESS, amount: "5000000" },
      spender: ANVIL_DEV_ACCOUNTS[7].address,
      nonce: "1",
      deadline: "9999999999",
      witness: { to: ANVIL_DEV_ACCOUNTS[7].address, validAfter: "0" },
    };
    for (const payload of [
      { ...signed.payload, permit2Authorization },
      { ...signed.payload, authorization: { ...(signed.payload.authorization as object), extra: "x" } },
    ]) {
      const res = await postTopUp(me.cookie, "5.00", { "payment-signature": encodePaymentSignatureHeader({ ...signed, payload }) });
      await expectPaymentInvalid(res, "unsupported_payload");
    }
    await expectNothingMoved(me.id, payer.address, 10n * USDC);

    // The same authorization without the extra field goes through, and what settled is what was recorded.
    const paid = await postTopUp(me.cookie, "5.00", { "payment-signature": encodePaymentSignatureHeader(signed) });
    expect(paid.status).toBe(200);
    const payment = await db.payment.findFirstOrThrow({ where: { accountId: me.id } });
    const authorization = signed.payload.authorization as { nonce: string };
    expect(payment).toMatchObject({
      status: "settled",
      payer: payer.address,
      amountMicros: 5n * USDC,
      authorizationNonce: authorization.nonce.toLowerCase(),
    });
    const used = await publicClient.getContractEvents({
      address: BASE_USDC_ADDRESS,
      abi: parseAbi(["event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)"]),
      eventName: "AuthorizationUsed",
      blockHash: (await publicClient.getTransactionReceipt({ hash: payment.txHash as Hash })).blockHash,
    });
    expect(used.map((e) => [e.args.authorizer, e.args.nonce])).toContainEqual([payer.address, payment.authorizationNonce]);
  });

  it("refuses a payer without the USDC before anything is sent", async () => {
    const broke = await fundedPayer(FUNDER, 0n);
    const me = await seedSignedInAccount(broke);
    const client = new x402Client().setSpendControls({ maxAmountPerPayment: "$100" });
    registerExactEvmScheme(client, { signer: broke });
    const pay = wrapFetchWithPayment(routeFetch(me.cookie), client);

    const res = await pay(TOP_UP_URL, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ amount: "5.00" }),
    });

    await expectPaymentInvalid(res, "insufficient_funds");
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(0n);
    expect(await db.payment.count({ where: { accountId: me.id } })).toBe(0);
  });

  it("credits nothing and marks the payment failed when the settlement fails on chain", async () => {
    const payer = await fundedPayer(FUNDER, 5n * USDC);
    const me = await seedSignedInAccount(payer);
    const testClient = createTestClient({ mode: "anvil", chain: base, transport: http(env.BASE_RPC_URL) });
    await testClient.setBalance({ address: payer.address, value: parseEther("1") });
    const { v2 } = await readChallenge(me.cookie, "5.00");
    const header = await signPaymentV2(payer, v2.accepts[0]);
    // Verified with the funds present; they leave the wallet before the relayer's transfer runs.
    faults.topUpBeforeSettle = async () => {
      await transferUsdc(payer, ANVIL_DEV_ACCOUNTS[7].address, 5n * USDC);
    };

    const res = await postTopUp(me.cookie, "5.00", { "payment-signature": header });

    expect(res.status).toBe(402);
    const error = await readError(res);
    expect(error.code).toBe("payment_settlement_failed");
    expect(decodePaymentResponseHeader(res.headers.get("payment-response")!)).toMatchObject({ success: false, payer: payer.address });
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(0n);
    const payment = await db.payment.findFirstOrThrow({ where: { accountId: me.id } });
    expect(payment.status).toBe("failed");
    expect(payment.failureReason).toMatch(/insufficient_balance|exceeds balance/);
    expect(await db.journalEntry.count({ where: { paymentId: payment.id } })).toBe(0);
    // A client that lost this answer hears the same from the lookup: nothing charged.
    const status = await readTopUpStatus(me.cookie, nonceOf(header));
    expect(status).toMatchObject({ status: "failed", amount: "5.000000", credited_at: null });
    expect(status.failure_reason).toMatch(/insufficient_balance|exceeds balance/);
  });
});

describe("GET /v1/x402/top-up/{nonce}: what happened to a signed authorization", () => {
  it("says not_received before the signed payment arrives and credited after, with the amount and the transfer", async () => {
    const payer = await fundedPayer(FUNDER, 6n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v2 } = await readChallenge(me.cookie, "6.00");
    const header = await signPaymentV2(payer, v2.accepts[0]);
    const nonce = nonceOf(header);

    const before = await readTopUpStatus(me.cookie, nonce);
    expect(before).toMatchObject({ nonce, status: "not_received", amount: null, transaction: null, received_at: null });
    expect(Date.parse(before.checked_at)).toBeGreaterThan(Date.now() - 60_000);

    const paid = await postTopUp(me.cookie, "6.00", { "payment-signature": header });
    expect(paid.status).toBe(200);
    const { transaction } = (await paid.json()) as TopUpBody;

    const after = await readTopUpStatus(me.cookie, nonce.toUpperCase().replace("0X", "0x"));
    expect(after).toMatchObject({ status: "credited", amount: "6.000000", transaction, failure_reason: null });
    expect(after.credited_at).not.toBeNull();
    expect((await getBalance("buyer", me.id)).totalMicros).toBe(6n * USDC);
  });

  it("answers only the account that sent it, and refuses a malformed nonce", async () => {
    const payer = await fundedPayer(FUNDER, 2n * USDC);
    const me = await seedSignedInAccount(payer);
    const { v2 } = await readChallenge(me.cookie, "2.00");
    const header = await signPaymentV2(payer, v2.accepts[0]);
    expect((await postTopUp(me.cookie, "2.00", { "payment-signature": header })).status).toBe(200);

    const other = await seedSignedInAccount();
    expect(await readTopUpStatus(other.cookie, nonceOf(header))).toMatchObject({ status: "not_received", amount: null });
    const malformed = await readTopUpStatus(me.cookie, "0x1234", 400);
    expect(malformed).toMatchObject({ error: { code: "invalid_request" } });
  });
});

async function expectPaymentInvalid(res: Response, reason: string, requiredAmount?: string) {
  expect(res.status).toBe(402);
  const body = (await res.json()) as { error: { code: string; reason: string; message: string } };
  expect(body.error).toMatchObject({ code: "payment_invalid", reason });
  const required = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
  expect(required.error).toBe(reason);
  if (requiredAmount) expect(required.accepts[0].amount).toBe(requiredAmount);
}

async function expectNothingMoved(accountId: string, payer: `0x${string}`, payerUsdc: bigint) {
  expect((await getBalance("buyer", accountId)).totalMicros).toBe(0n);
  expect(await db.payment.count({ where: { accountId } })).toBe(0);
  expect(await readUsdcBalance(payer)).toBe(payerUsdc);
}
