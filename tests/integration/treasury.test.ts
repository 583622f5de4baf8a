import { spawn } from "node:child_process";
import { createPublicClient, createTestClient, createWalletClient, http, parseAbi, parseEther, type Address } from "viem";
import { base } from "viem/chains";
import { describe, expect, it } from "vitest";
import { BASE_USDC_ADDRESS, getDevAccount } from "@/lib/chain/constants";
import { generateDevKeys } from "@/lib/chain/dev-keys";
import { usdcAbi } from "@/lib/chain/usdc-abi";
import { env } from "@/lib/env";
import { relayerAccount } from "@/lib/chain/client";

/**
 * `npm run treasury`: the operator's way to set and check the relayer's USDC allowance on the treasury, without
 * which every withdrawal fails on chain. Run as the operator runs it (the script, in its own process) against the
 * local chain, for a treasury of its own that starts with no allowance, as a fresh production treasury does.
 */
const chain = createPublicClient({ chain: base, transport: http(env.BASE_RPC_URL) });

function treasuryCommand(args: string[], extraEnv: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--import", "./server/server-modules.mjs", "scripts/treasury.ts", ...args], {
      // eslint-disable-next-line no-restricted-properties -- the command runs with the test run's configuration
      env: { ...process.env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, out }));
  });
}

const allowance = (treasury: Address) =>
  chain.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: "allowance", args: [treasury, relayerAccount.address] });

describe("npm run treasury", () => {
  it("finds a treasury that has not approved the relayer, sets the allowance with the treasury's key, and checks it", async () => {
    // A new treasury with gas and 50 USDC and no allowance for the relayer.
    const treasury = generateDevKeys().treasury;
    await createTestClient({ mode: "anvil", chain: base, transport: http(env.BASE_RPC_URL) }).setBalance({
      address: treasury.address,
      value: parseEther("1"),
    });
    // Minted by the test USDC's admin (an unlocked anvil account), so no other test's treasury balance moves.
    const admin = createWalletClient({ account: getDevAccount("usdcAdmin").address, chain: base, transport: http(env.BASE_RPC_URL) });
    const funded = await admin.writeContract({
      address: BASE_USDC_ADDRESS,
      abi: parseAbi(["function mint(address to, uint256 amount) returns (bool)"]),
      functionName: "mint",
      args: [treasury.address, 50_000_000n],
    });
    await chain.waitForTransactionReceipt({ hash: funded });
    const asOperator = { TREASURY_ADDRESS: treasury.address };

    const before = await treasuryCommand(["check"], asOperator);
    expect(before.code, before.out).toBe(1);
    expect(before.out).toContain(`treasury     ${treasury.address}   holds 50.000000 USDC`);
    expect(before.out).toMatch(/problem: the relayer may move 0\.000000 USDC from the treasury, less than 50\.000000/);

    // Without the key: the transaction for the treasury's owner to send, and nothing sent.
    const printed = await treasuryCommand(["approve", "20.00"], asOperator);
    expect(printed.code, printed.out).toBe(0);
    expect(printed.out).toContain(`from  ${treasury.address}`);
    expect(printed.out).toMatch(/data {2}0x095ea7b3/); // approve(address,uint256)
    expect(await allowance(treasury.address)).toBe(0n);

    const approved = await treasuryCommand(["approve", "20.00"], { ...asOperator, TREASURY_PRIVATE_KEY: treasury.privateKey });
    expect(approved.code, approved.out).toBe(0);
    expect(approved.out).toContain("ok: withdrawals of up to 20.000000 USDC can be paid");
    expect(await allowance(treasury.address)).toBe(20_000_000n);

    // 20 of 50: enough for withdrawals up to 20, not for the whole balance.
    const partial = await treasuryCommand(["check", "--min", "20"], asOperator);
    expect(partial.code, partial.out).toBe(0);
    const whole = await treasuryCommand(["check"], asOperator);
    expect(whole.code, whole.out).toBe(1);
  }, 240_000);

  it("refuses a key that is not the treasury's before sending anything", async () => {
    const treasury = generateDevKeys().treasury;
    const other = generateDevKeys().treasury;
    const refused = await treasuryCommand(["approve", "--unlimited"], {
      TREASURY_ADDRESS: treasury.address,
      TREASURY_PRIVATE_KEY: other.privateKey,
    });
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/TREASURY_PRIVATE_KEY: is the key of 0x[0-9a-fA-F]{40}, not of TREASURY_ADDRESS/);
    expect(await allowance(treasury.address)).toBe(0n);
  }, 120_000);
});
