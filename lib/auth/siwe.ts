import "server-only";
import { getAddress, isAddress, type Address, type Hex } from "viem";
import { parseSiweMessage } from "viem/siwe";
import { assertNonceUsable, consumeNonce, issueNonce, NONCE_TTL_MS } from "@/lib/auth/nonces";
import { createSession, revokeSessionByToken } from "@/lib/auth/sessions";
import { publicClient } from "@/lib/chain/client";
import { BASE_CHAIN_ID } from "@/lib/chain/constants";
import { db, type Tx } from "@/lib/db/client";
import { deployment } from "@/lib/env";
import { AppError } from "@/lib/errors";
import type { SiweChallenge, VerifyInput } from "@/lib/auth/schemas";

/**
 * Sign-In with Ethereum (EIP-4361). viem parses the message and checks the signature (EOA, EIP-1271 and
 * EIP-6492 through a Base public client); everything viem leaves to the relying party is checked here:
 * domain, uri, chain id, our own nonce bookkeeping and the message's time window.
 */

export const SIWE_STATEMENT = "Sign in to svc with your wallet.";

/** How far a client's clock may run ahead of ours when it stamps `Issued At`. */
const ISSUED_AT_SKEW_MS = 60_000;

/** Everything a client needs to build the EIP-4361 message for `walletAddress`, around a fresh nonce. */
export async function createSiweChallenge(walletAddress: string, now = new Date()): Promise<SiweChallenge> {
  const { nonce, issuedAt, expiresAt } = await issueNonce(getAddress(walletAddress), now);
  return {
    nonce,
    issued_at: issuedAt.toISOString(),
    expiration_time: expiresAt.toISOString(),
    domain: deployment.host,
    uri: deployment.origin,
    chain_id: BASE_CHAIN_ID,
    statement: SIWE_STATEMENT,
  };
}

export type SignIn = { address: Address; token: string; expiresAt: Date };

/**
 * Verifies a signed SIWE message and opens a session for its wallet, creating the account on first sign-in.
 * The nonce is consumed only after every check has passed, in the transaction that opens the session.
 */
export async function signInWithEthereum(
  input: VerifyInput,
  options: { userAgent?: string | null; previousSessionToken?: string; now?: Date } = {},
): Promise<SignIn> {
  const now = options.now ?? new Date();
  const message = parseSiweMessageOrThrow(input.message);
  const signature = parseSignatureOrThrow(input.signature);
  assertAddressedToUs(message);
  assertWithinTimeWindow(message, now);
  await assertNonceUsable(message.nonce, message.address, now);
  await assertSignatureValid(input.message, signature, message, now);

  const session = await db.$transaction(async (tx) => {
    await consumeNonce(tx, message.nonce, message.address, now);
    const accountId = await upsertAccountForWallet(tx, message.address);
    return createSession(accountId, { userAgent: options.userAgent, now, tx });
  });
  if (options.previousSessionToken) await revokeSessionByToken(options.previousSessionToken, now);
  return { address: message.address, ...session };
}

type SiweFields = {
  scheme?: string;
  domain: string;
  address: Address;
  uri: string;
  chainId: number;
  nonce: string;
  issuedAt: Date;
  expirationTime?: Date;
  notBefore?: Date;
};

// EIP-4361's grammar, anchored at both ends: viem's parser also accepts text around the fields, and what we
// accept should be exactly what the wallet showed the user.
const SIWE_GRAMMAR =
  /^(?:[a-zA-Z][a-zA-Z0-9+.-]*:\/\/)?[^\s/]+ wants you to sign in with your Ethereum account:\n0x[0-9a-fA-F]{40}\n\n(?:[^\n]+\n)?\nURI: [^\n]+\nVersion: 1\nChain ID: [0-9]+\nNonce: [a-zA-Z0-9]{8,}\nIssued At: [^\n]+(?:\nExpiration Time: [^\n]+)?(?:\nNot Before: [^\n]+)?(?:\nRequest ID: [^\n]*)?(?:\nResources:(?:\n- [^\n]+)*)?$/;

function parseSiweMessageOrThrow(text: string): SiweFields {
  const fields = SIWE_GRAMMAR.test(text) ? parseSiweMessage(text) : {};
  const { scheme, domain, address, uri, chainId, nonce, issuedAt, expirationTime, notBefore } = fields;
  if (!domain || !address || !uri || chainId === undefined || !nonce || !issuedAt) {
    throw invalidMessage(
      "The message is not an EIP-4361 (Sign-In with Ethereum) message; build it from the GET /auth/nonce fields, e.g. with viem's createSiweMessage.",
    );
  }
  if (!isAddress(address)) throw invalidMessage("The message's address is not EIP-55 checksummed.");
  for (const [name, date] of [
    ["Issued At", issuedAt],
    ["Expiration Time", expirationTime],
    ["Not Before", notBefore],
  ] as const) {
    if (date && Number.isNaN(date.getTime())) throw invalidMessage(`The message's ${name} is not an RFC 3339 date-time.`);
  }
  return { scheme, domain, address: getAddress(address), uri, chainId, nonce, issuedAt, expirationTime, notBefore };
}

function parseSignatureOrThrow(signature: string): Hex {
  if (!/^0x(?:[0-9a-fA-F]{2})+$/.test(signature)) {
    throw new AppError("malformed_signature", "The signature must be hex-encoded bytes with a 0x prefix.", {
      details: { param: "signature" },
    });
  }
  return signature as Hex;
}

function assertAddressedToUs(message: SiweFields) {
  const ownScheme = deployment.secure ? "https" : "http";
  if (message.domain !== deployment.host || (message.scheme !== undefined && message.scheme !== ownScheme)) {
    throw new AppError(
      "siwe_domain_mismatch",
      `The message asks to sign in to ${message.domain}, not to ${deployment.host}: it was made for another site.`,
    );
  }
  if (originOf(message.uri) !== deployment.origin) {
    throw new AppError("siwe_uri_mismatch", `The message's URI must be on ${deployment.origin}.`);
  }
  if (message.chainId !== BASE_CHAIN_ID) {
    throw new AppError("siwe_wrong_chain", `Sign in on Base: the message's Chain ID must be ${BASE_CHAIN_ID}, not ${message.chainId}.`);
  }
}

function originOf(uri: string): string | null {
  try {
    return new URL(uri).origin;
  } catch {
    return null;
  }
}

function assertWithinTimeWindow(message: SiweFields, now: Date) {
  if (message.expirationTime && message.expirationTime <= now) {
    throw new AppError("siwe_expired", "The message's Expiration Time has passed; sign a new one.");
  }
  if (message.notBefore && message.notBefore > now) {
    throw new AppError("siwe_not_yet_valid", "The message's Not Before time has not come yet.");
  }
  if (message.issuedAt.getTime() > now.getTime() + ISSUED_AT_SKEW_MS) {
    throw new AppError("siwe_issued_at_invalid", "The message's Issued At lies in the future; check the device clock.");
  }
  if (message.issuedAt.getTime() < now.getTime() - NONCE_TTL_MS) {
    throw new AppError("siwe_issued_at_invalid", "The message was issued too long ago; sign a new one.");
  }
}

async function assertSignatureValid(text: string, signature: Hex, message: SiweFields, now: Date) {
  const valid = await publicClient.verifySiweMessage({
    message: text,
    signature,
    address: message.address,
    domain: deployment.host,
    nonce: message.nonce,
    time: now,
  });
  if (!valid) {
    throw new AppError("invalid_signature", `The signature does not prove control of ${message.address} over this message.`);
  }
}

/** One statement, so two first sign-ins of the same wallet racing each other still end with one account. */
async function upsertAccountForWallet(tx: Tx, walletAddress: Address): Promise<string> {
  const [row] = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO accounts (wallet_address) VALUES (${walletAddress})
    ON CONFLICT (wallet_address) DO UPDATE SET wallet_address = EXCLUDED.wallet_address
    RETURNING id::text AS id`;
  return row.id;
}

function invalidMessage(message: string) {
  return new AppError("invalid_siwe_message", message, { details: { param: "message" } });
}
