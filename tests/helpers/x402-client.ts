/** Test-side x402 clients: a route-dispatching fetch, signed payments, and funded payer wallets on the local chain. */
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/client";
import { createWalletClient, http, type Address, type Hash } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { base } from "viem/chains";
import { POST as topUpRoute } from "@/app/v1/x402/top-up/route";
import { GET as topUpStatusRoute } from "@/app/v1/x402/top-up/[nonce]/route";
import { publicClient } from "@/lib/chain/client";
import { BASE_USDC_ADDRESS, type DevAccount } from "@/lib/chain/constants";
import { usdcAbi } from "@/lib/chain/usdc-abi";
import { env } from "@/lib/env";
import { jsonRequest, routeParams } from "./http";

export const TOP_UP_URL = "http://localhost:3000/v1/x402/top-up";

/** A fetch that hands requests to the top-up route handler in-process, as the signed-in browser would send them. */
export function routeFetch(cookie: string): typeof fetch {
  return async (input, init) => {
    const req = new Request(input as RequestInfo, init);
    req.headers.set("cookie", cookie);
    return topUpRoute(req);
  };
}

export function postTopUp(cookie: string, amount: string, headers: Record<string, string> = {}) {
  return topUpRoute(jsonRequest("POST", "/v1/x402/top-up", { amount }, { cookie, ...headers }));
}

/** The EIP-3009 nonce a PAYMENT-SIGNATURE value carries. */
export function nonceOf(header: string): string {
  return (decodePaymentSignatureHeader(header).payload as { authorization: { nonce: string } }).authorization.nonce;
}

/** GET /v1/x402/top-up/{nonce} as the signed-in browser asks it; the body, after checking the status. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reads whichever shape the status carries
export async function readTopUpStatus(cookie: string, nonce: string, expectStatus = 200): Promise<any> {
  const res = await topUpStatusRoute(jsonRequest("GET", `/v1/x402/top-up/${nonce}`, undefined, { cookie }), routeParams({ nonce }));
  if (res.status !== expectStatus) throw new Error(`expected ${expectStatus}, got ${res.status}: ${await res.text()}`);
  return res.json();
}

/** The 402 challenge for an amount, decoded. */
export async function readChallenge(
  cookie: string,
  amount: string,
): Promise<{ v2: PaymentRequired; v1: { accepts: Record<string, unknown>[] } }> {
  const res = await postTopUp(cookie, amount);
  if (res.status !== 402) throw new Error(`expected 402, got ${res.status}`);
  return {
    v2: decodePaymentRequiredHeader(res.headers.get("payment-required")!),
    v1: (await res.json()) as { accepts: Record<string, unknown>[] },
  };
}

/** A v2 PAYMENT-SIGNATURE value: `signFor` is what the wallet signs, `accepted` what it claims to accept. */
export async function signPaymentV2(
  payer: PrivateKeyAccount,
  signFor: PaymentRequirements,
  accepted: PaymentRequirements = signFor,
): Promise<string> {
  const { payload } = await new ExactEvmScheme(payer).createPaymentPayload(2, signFor);
  const full: PaymentPayload = { x402Version: 2, resource: { url: TOP_UP_URL }, accepted, payload };
  return encodePaymentSignatureHeader(full);
}

export async function signPaymentV1(payer: PrivateKeyAccount, requirementsV1: Record<string, unknown>): Promise<string> {
  const payload = await new ExactEvmSchemeV1(payer).createPaymentPayload(1, requirementsV1 as unknown as PaymentRequirements);
  return encodePaymentSignatureHeader(payload as unknown as PaymentPayload);
}

export function readUsdcBalance(address: Address, blockNumber?: bigint): Promise<bigint> {
  return publicClient.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: "balanceOf", args: [address], blockNumber });
}

export async function transferUsdc(from: DevAccount | PrivateKeyAccount, to: Address, amount: bigint): Promise<Hash> {
  const account = "privateKey" in from ? privateKeyToAccount(from.privateKey) : from;
  const wallet = createWalletClient({ account, chain: base, transport: http(env.BASE_RPC_URL) });
  const hash = await wallet.writeContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: "transfer", args: [to, amount] });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (receipt.status !== "success") throw new Error(`USDC transfer ${hash} reverted`);
  return hash;
}

/** A fresh wallet holding `usdc` micro-USDC, funded by a dev account (no ETH needed: the relayer pays gas). */
export async function fundedPayer(funder: DevAccount, usdc: bigint): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  if (usdc > 0n) await transferUsdc(funder, payer.address, usdc);
  return payer;
}
