/**
 * Nothing signed in dev is worth anything elsewhere (issue 34, finding 6). The local chain is Base to a wallet (chain
 * id 8453, the real USDC address and EIP-712 domain), so a dev top-up's authorization is valid on Base mainnet too:
 * its payee must be a key of this install's own, never one anyone holds. Through the app as `npm run dev` runs it
 * (SVC_ENV=development, no TREASURY_ADDRESS or RELAYER_PRIVATE_KEY set), in a process of its own, restarted.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { getAddress, type Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, describe, expect, it } from "vitest";
import { ANVIL_DEV_ACCOUNTS } from "@/lib/chain/constants";
import { DEV_KEYS_FILE } from "@/lib/chain/dev-keys";
import { startAppProcess, type AppProcess } from "../helpers/app-process";
import { seedSignedInAccount } from "../helpers/factories";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PUBLIC_ADDRESSES = ANVIL_DEV_ACCOUNTS.map((a) => a.address);
const apps: AppProcess[] = [];

afterAll(async () => {
  await Promise.all(apps.map((app) => app.kill()));
});

/** The app as `npm run dev` starts it: development mode, the platform keys left to the install's keys file. */
async function startDevApp(keysFile: string): Promise<AppProcess> {
  const app = await startAppProcess({ SVC_ENV: "development", SVC_DEV_KEYS_FILE: keysFile });
  apps.push(app);
  return app;
}

/** Where a dev top-up's 402 asks the wallet to pay, in the v2 header and the v1 body. */
async function payees(app: AppProcess, cookie: string): Promise<Address[]> {
  const res = await fetch(`${app.url}/v1/x402/top-up`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify({ amount: "5.00" }),
  });
  expect(res.status).toBe(402);
  const v2 = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
  const v1 = (await res.json()) as { accepts: { payTo: string }[] };
  return [...v2.accepts.map((r) => r.payTo), ...v1.accepts.map((r) => r.payTo)].map((a) => getAddress(a));
}

function readKeys(file: string) {
  return JSON.parse(readFileSync(file, "utf8")) as Record<"treasury" | "relayer", { address: Address; privateKey: `0x${string}` }>;
}

describe("a dev stack's top-up payee", () => {
  it("is this install's own generated key, never a public one, and the same after a restart", async () => {
    const install = mkdtempSync(path.join(tmpdir(), "svc-dev-install-"));
    const keysFile = path.join(install, ".data", "dev-keys.json");
    const me = await seedSignedInAccount();

    const first = await startDevApp(keysFile);
    const paidTo = await payees(first, me.cookie);
    for (const address of paidTo) expect(PUBLIC_ADDRESSES).not.toContain(address);
    const keys = readKeys(keysFile);
    // Every challenge names the treasury of the keys file, whose key exists only there.
    expect(paidTo).toEqual([keys.treasury.address, keys.treasury.address]);
    expect(privateKeyToAccount(keys.treasury.privateKey).address).toBe(keys.treasury.address);
    for (const address of [keys.treasury.address, keys.relayer.address]) expect(PUBLIC_ADDRESSES).not.toContain(address);
    expect(statSync(keysFile).mode & 0o077).toBe(0);

    // The dev stack stops and starts again: the same payee (a top-up signed before the restart still pays the install).
    // Another install, meanwhile, generates another pair.
    await first.kill();
    const [second, elsewhere] = await Promise.all([
      startDevApp(keysFile),
      startDevApp(path.join(mkdtempSync(path.join(tmpdir(), "svc-dev-install-")), "dev-keys.json")),
    ]);
    expect(await payees(second, me.cookie)).toEqual(paidTo);
    expect(readKeys(keysFile)).toEqual(keys);
    const [otherPayee] = await payees(elsewhere, me.cookie);
    expect(otherPayee).not.toBe(paidTo[0]);
    expect(PUBLIC_ADDRESSES).not.toContain(otherPayee);
  }, 120_000);

  it("keeps its key out of the repository: the default keys file is git-ignored and untracked", () => {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" });
    expect(DEV_KEYS_FILE).toBe(".data/dev-keys.json");
    expect(git("check-ignore", DEV_KEYS_FILE).trim()).toBe(DEV_KEYS_FILE);
    expect(git("ls-files", "--", path.dirname(DEV_KEYS_FILE)).trim()).toBe("");
  });
});
