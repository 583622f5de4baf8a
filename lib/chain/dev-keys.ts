import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { isAddressEqual, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { DevAccount } from "./constants";
import { isAnvilDevAccount } from "./dev-wallet";

/**
 * A dev stack's platform keys: the treasury (the payee of every top-up, and the payer of withdrawals) and the relayer
 * (pays the gas that settles top-ups and sends withdrawals), generated once per install and kept in the git-ignored
 * data folder, never one of anvil's public accounts. The local chain reuses Base's chain id, USDC address and EIP-712
 * domain, so a top-up signed in dev is a valid transfer authorization on Base mainnet too, until its validBefore: paid
 * to a key anyone holds it would be anyone's money; paid to this install's own key, the worst case is paying yourself.
 *
 * The file is created once (0600 in a 0700 folder) and read by every process of the stack (lib/env.ts resolves
 * TREASURY_ADDRESS and RELAYER_PRIVATE_KEY from it outside production when they are unset; the local chain funds
 * these accounts). Creation is atomic (a complete temporary file linked into place), so two processes starting at once
 * agree on one pair. Production never reads it: there both are required and set by the operator.
 */

/** Where `npm run dev` keeps the keys (SVC_DEV_KEYS_FILE moves it; tests and the e2e stack use a file per run). */
export const DEV_KEYS_FILE = ".data/dev-keys.json";

export type DevKeys = { treasury: DevAccount; relayer: DevAccount };

const NOTE =
  "svc's local dev keys, generated for this install (git-ignored): the treasury every dev top-up pays, and the relayer. " +
  "Never send real funds to them.";

export function generateDevKeys(): DevKeys {
  const account = (): DevAccount => {
    const privateKey = generatePrivateKey();
    return { address: privateKeyToAccount(privateKey).address, privateKey };
  };
  return { treasury: account(), relayer: account() };
}

/** The keys in `file`, created there first when it does not exist. Throws, naming the file, when it is not a valid pair. */
export function loadOrCreateDevKeys(file: string): DevKeys {
  const existing = readDevKeys(file);
  if (existing) return existing;
  const keys = generateDevKeys();
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(temporary, `${JSON.stringify({ note: NOTE, ...keys }, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(temporary, file);
    return keys;
  } catch (error) {
    // Another process created it first: theirs is the install's pair.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return readDevKeys(file)!;
    throw error;
  } finally {
    unlinkSync(temporary);
  }
}

/** The keys in `file`; null when there is no such file. Throws, naming the file, when it is not a valid pair. */
export function readDevKeys(file: string): DevKeys | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  const problem = (what: string) => new Error(`${file}: ${what} (delete the file to generate a new pair)`);
  let raw: Record<string, { address?: unknown; privateKey?: unknown } | undefined>;
  try {
    raw = JSON.parse(text) as typeof raw;
  } catch {
    throw problem("not JSON");
  }
  const account = (role: keyof DevKeys): DevAccount => {
    const { address, privateKey } = raw?.[role] ?? {};
    if (typeof privateKey !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(privateKey))
      throw problem(`${role}.privateKey is not a 32-byte hex key`);
    const derived = privateKeyToAccount(privateKey as Hex).address;
    if (typeof address !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(address) || !isAddressEqual(derived, address as Address))
      throw problem(`${role}.address is not the address of ${role}.privateKey`);
    if (isAnvilDevAccount(derived)) throw problem(`${role} is one of anvil's public dev accounts, whose key anyone holds`);
    return { address: derived, privateKey: privateKey as Hex };
  };
  return { treasury: account("treasury"), relayer: account("relayer") };
}
