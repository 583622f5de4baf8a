/** Sign-in the way a wallet client does it: fetch a nonce, build the EIP-4361 message, sign, verify. */
import type { Address, Hex } from "viem";
import { GET as getNonce } from "@/app/auth/nonce/route";
import { POST as postVerify } from "@/app/auth/verify/route";
import { buildSiweMessage, type SiweChallenge } from "@/lib/auth/siwe-message";
import { jsonRequest } from "./http";

export async function fetchChallenge(walletAddress: string): Promise<SiweChallenge> {
  const res = await getNonce(jsonRequest("GET", `/auth/nonce?walletAddress=${walletAddress}`));
  if (res.status !== 200) throw new Error(`GET /auth/nonce answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as SiweChallenge;
}

export { buildSiweMessage };

export function verify(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return postVerify(jsonRequest("POST", "/auth/verify", body, headers));
}

type Signer = { address: Address; signMessage: (args: { message: string }) => Promise<Hex> };

/** A complete sign-in of an EOA; returns the response and the Cookie header for later requests. */
export async function signInWithWallet(wallet: Signer) {
  const challenge = await fetchChallenge(wallet.address);
  const message = buildSiweMessage(challenge, wallet.address);
  const res = await verify({ message, signature: await wallet.signMessage({ message }) });
  return { res, cookie: cookieFrom(res), challenge };
}

/** The `name=value` part of the response's svc_session Set-Cookie, ready for a Cookie header. */
export function cookieFrom(res: Response): string {
  const setCookie = res.headers.get("set-cookie") ?? "";
  return setCookie.split(";")[0];
}
