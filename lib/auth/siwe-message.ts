import type { Address } from "viem";
import { createSiweMessage, type SiweMessage } from "viem/siwe";

/**
 * What GET /auth/nonce answers: every field of the EIP-4361 message but the address. Client-safe (no server
 * imports), so the browser, the agent CLI and the tests build the message the one way the server expects.
 */
export type SiweChallenge = {
  nonce: string;
  issuedAt: string;
  expirationTime: string;
  domain: string;
  uri: string;
  chainId: number;
  statement: string;
};

/** The EIP-4361 text to sign for `address`; `overrides` bend single fields (negative tests). */
export function buildSiweMessage(challenge: SiweChallenge, address: Address, overrides: Partial<SiweMessage> = {}): string {
  return createSiweMessage({
    address,
    domain: challenge.domain,
    uri: challenge.uri,
    chainId: challenge.chainId,
    nonce: challenge.nonce,
    issuedAt: new Date(challenge.issuedAt),
    expirationTime: new Date(challenge.expirationTime),
    statement: challenge.statement,
    version: "1",
    ...overrides,
  });
}
