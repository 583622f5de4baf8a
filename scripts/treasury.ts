/**
 * The operator's treasury command: `npm run treasury -- <command>` (lib/payments/treasury.ts).
 *
 *   check [--min <usd>]          the relayer's USDC allowance on the treasury, the treasury's balance, the relayer's gas;
 *                                exit 1 when withdrawals of up to --min (default: the treasury's whole balance) would
 *                                fail, saying why
 *   approve <usd> | --unlimited  set the relayer's allowance: signed with TREASURY_PRIVATE_KEY when it is set (in this
 *                                shell only), else printed as the transaction for the treasury's owner to send
 *                                (a multisig, a hardware wallet); then checked
 *
 * Reads the app's configuration (BASE_RPC_URL, USDC_ADDRESS, TREASURY_ADDRESS, RELAYER_PRIVATE_KEY), so run it with
 * the deployment's environment.
 */
import { parseArgs } from "node:util";
import { formatEther, maxUint256 } from "viem";
import { parseMicros } from "../lib/money";
import { approveRelayer, approveRelayerCall, describeMicros, readTreasuryStatus, type TreasuryStatus } from "../lib/payments/treasury";
import { env } from "../lib/env";
import { exitAfterOutput } from "./process-utils";

const USAGE = "usage: npm run treasury -- check [--min <usd>] | approve <usd> | approve --unlimited";

function usd(text: string | undefined, what: string): bigint {
  const micros = text === undefined ? null : parseMicros(text);
  if (micros === null) throw new UsageError(`${what} must be a USD amount like 5000.00`);
  return micros;
}

class UsageError extends Error {}

function print(status: TreasuryStatus) {
  console.log(`chain        ${status.chainId}`);
  console.log(`USDC         ${status.usdc}`);
  console.log(`treasury     ${status.treasury}   holds ${describeMicros(status.treasuryBalanceMicros)} USDC`);
  console.log(`relayer      ${status.relayer}   may move ${describeMicros(status.allowanceMicros)} USDC of it`);
  console.log(`relayer gas  ${formatEther(status.relayerGasWei)} ETH`);
  if (status.problems.length === 0) {
    console.log(`ok: withdrawals of up to ${describeMicros(status.requiredMicros)} USDC can be paid`);
  } else {
    for (const problem of status.problems) console.log(`problem: ${problem}`);
  }
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { min: { type: "string" }, unlimited: { type: "boolean", default: false }, help: { type: "boolean", short: "h" } },
  });
  const [command, amount] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  if (command === "check") {
    const status = await readTreasuryStatus(values.min === undefined ? undefined : usd(values.min, "--min"));
    print(status);
    return status.problems.length === 0 ? 0 : 1;
  }
  if (command === "approve") {
    const micros = values.unlimited ? maxUint256 : usd(amount, "the allowance");
    if (!env.TREASURY_PRIVATE_KEY) {
      const call = approveRelayerCall(micros);
      console.log("TREASURY_PRIVATE_KEY is not set: send this transaction from the treasury, then run `npm run treasury -- check`:");
      console.log(`  from  ${call.from}`);
      console.log(`  to    ${call.to}   (USDC)`);
      console.log(`  data  ${call.data}`);
      console.log(`        approve(${(await readTreasuryStatus()).relayer}, ${micros})`);
      return 0;
    }
    const hash = await approveRelayer(micros);
    console.log(`approved: the relayer may move ${describeMicros(micros)} USDC from the treasury (transaction ${hash})`);
    const status = await readTreasuryStatus(micros === maxUint256 ? undefined : micros);
    print(status);
    return status.problems.length === 0 ? 0 : 1;
  }
  console.log(USAGE);
  return 2;
}

main().then(
  (code) => exitAfterOutput(code),
  (error: unknown) => {
    console.error(error instanceof UsageError ? `${error.message}\n${USAGE}` : error instanceof Error ? error.message : error);
    exitAfterOutput(error instanceof UsageError ? 2 : 1);
  },
);
