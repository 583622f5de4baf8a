import type { Address, Hex } from "viem";
import type { SessionView, SiweChallenge } from "@/lib/auth/schemas";
import { buildSiweMessage } from "@/lib/auth/siwe-message";
import { api } from "@/lib/browser/api";

/**
 * Sign-In with Ethereum from the browser: the nonce and every other field come from GET /auth/nonce, the
 * wallet signs the EIP-4361 text, POST /auth/verify sets the HttpOnly svc_session cookie.
 */
export async function signInWithWallet(address: Address, signMessage: (message: string) => Promise<Hex>): Promise<SessionView> {
  const challenge = await api<SiweChallenge>(`/auth/nonce?walletAddress=${encodeURIComponent(address)}`);
  const message = buildSiweMessage(challenge, address);
  const signature = await signMessage(message);
  return api<SessionView>("/auth/verify", { method: "POST", body: { message, signature } });
}
