import type { Address } from "viem";
import { createSiweMessage, type SiweMessage } from "viem/siwe";
import type { SiweChallenge } from "@/lib/auth/schemas";

export type { SiweChallenge };

/**
 * The EIP-4361 text to sign for `address`, built from what GET /auth/nonce answered; `overrides` bend single
 * fields (negative tests). Client-safe, so the browser, the agent CLI and the tests build it the one way the
 * server expects.
 */
export function buildSiweMessage(challenge: SiweChallenge, address: Address, overrides: Partial<SiweMessage> = {}): string {
  return createSiweMessage({
    address,
    domain: challenge.domain,
    uri: challenge.uri,
    chainId: challenge.chain_id,
    nonce: challenge.nonce,
    issuedAt: new Date(challenge.issued_at),
    expirationTime: new Date(challenge.expiration_time),
    statement: challenge.statement,
    version: "1",
    ...overrides,
  });
}
