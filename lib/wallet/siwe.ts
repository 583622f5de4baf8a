import type { Address, Hex } from "viem";
import { createSiweMessage } from "viem/siwe";
import type { SiweChallenge } from "@/lib/auth/siwe";
import { api } from "@/lib/wallet/api";

export type Session = { address: Address; expiresAt: string };

// The shape GET /auth/nonce answers (a type-only import: nothing of the server module reaches the browser).
type Challenge = SiweChallenge;

/**
 * Sign-In with Ethereum from the browser: the nonce and every other field come from GET /auth/nonce, the
 * wallet signs the EIP-4361 text, POST /auth/verify sets the HttpOnly svc_session cookie.
 */
export async function signInWithWallet(address: Address, signMessage: (message: string) => Promise<Hex>): Promise<Session> {
  const challenge = await api<Challenge>(`/auth/nonce?walletAddress=${encodeURIComponent(address)}`);
  const message = createSiweMessage({
    address,
    domain: challenge.domain,
    uri: challenge.uri,
    chainId: challenge.chainId,
    nonce: challenge.nonce,
    statement: challenge.statement,
    version: "1",
    issuedAt: new Date(challenge.issuedAt),
    expirationTime: new Date(challenge.expirationTime),
  });
  const signature = await signMessage(message);
  return api<Session>("/auth/verify", { method: "POST", body: { message, signature } });
}
