/**
 * topup: POST /v1/x402/top-up through @x402/fetch. The first answer is a 402 for exactly the amount; the
 * client signs an EIP-3009 USDC authorization and retries. Before signing, the wallet's USDC is read on
 * chain so "no funds" is said plainly instead of as a failed settlement. Against a local (dev) deployment only
 * one of the local chain's funded dev accounts signs: that chain reuses Base's chain id and USDC domain, so what a
 * real wallet signed there would be a valid payment on Base too (lib/chain/dev-wallet.ts).
 */
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { createPublicClient, erc20Abi, formatUnits, http, type Address } from "viem";
import { base } from "viem/chains";
import { devPaymentRefusal, isAnvilDevAccount } from "../../lib/chain/dev-wallet";
import { apiFailure, fetchOrExplain, type Context } from "./api";
import { resolveSigner } from "./config";
import { CliError, EXIT } from "./errors";

export type TopUpResult = { credited: string; balance: string; transaction: string; payer: string };

const AMOUNT = /^\d{1,9}(\.\d{1,6})?$/;

export function assertUsdAmount(amount: string | undefined, what: string): string {
  if (!amount || !AMOUNT.test(amount)) {
    throw new CliError(
      `${what} must be a USD amount like 5 or 10.50 (at most 6 decimals), got ${JSON.stringify(amount ?? "")}.`,
      EXIT.usage,
      "invalid_amount",
    );
  }
  return amount;
}

export async function topUp(ctx: Context, amount: string, note: (text: string) => void): Promise<TopUpResult> {
  assertUsdAmount(amount, "The top-up amount");
  const cookie = ctx.store.requireSession(ctx.config.baseUrl).cookie;
  const signer = resolveSigner(ctx.config, ctx.env);
  note(`Topping up ${amount} USDC from ${signer.account.address} over x402…`);

  let refusal: CliError | undefined;
  const client = new x402Client().setSpendControls({ maxAmountPerPayment: `$${amount}` });
  registerExactEvmScheme(client, { signer: signer.account });
  client.onBeforePaymentCreation(async ({ selectedRequirements }) => {
    const r = selectedRequirements as { amount?: string; maxAmountRequired?: string; asset: string; network: string };
    const needed = BigInt(r.amount ?? r.maxAmountRequired ?? "0");
    const held = await readUsdc(ctx.config.rpcUrl, r.asset as Address, signer.account.address).catch((error: unknown) => {
      note(
        `(could not read the wallet's USDC at ${ctx.config.rpcUrl}: ${(error as Error).message}; ${ctx.config.isLocal ? "not paying" : "paying anyway"})`,
      );
      return null;
    });
    const devRefusal = ctx.config.isLocal ? devPaymentRefusal(signer.account.address, held) : null;
    if (devRefusal) {
      refusal = new CliError(
        `${devRefusal} Nothing was signed. (Without SVC_AGENT_PRIVATE_KEY or --key-file, a local base URL pays from anvil's first dev account.)`,
        isAnvilDevAccount(signer.account.address) ? EXIT.funds : EXIT.usage,
        "dev_wallet_refused",
        { wallet: signer.account.address, wallet_usdc: held === null ? null : formatUnits(held, 6) },
      );
      return { abort: true, reason: "not one of the dev chain's funded test accounts" };
    }
    if (held !== null && held < needed) {
      refusal = new CliError(
        `No funds on chain: wallet ${signer.account.address} holds ${formatUnits(held, 6)} USDC on Base (${r.network}), ` +
          `the top-up needs ${formatUnits(needed, 6)} USDC. Send USDC to that address, or top up less.`,
        EXIT.funds,
        "wallet_insufficient_usdc",
        { wallet: signer.account.address, wallet_usdc: formatUnits(held, 6), needed: formatUnits(needed, 6) },
      );
      return { abort: true, reason: "the wallet holds too little USDC" };
    }
  });

  const pay = wrapFetchWithPayment((input, init) => fetchOrExplain(ctx, input, init), client);

  let res: Response;
  try {
    res = await pay(`${ctx.config.baseUrl}/v1/x402/top-up`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", cookie },
      body: JSON.stringify({ amount }),
    });
  } catch (error) {
    if (refusal) throw refusal;
    if (error instanceof CliError) throw error;
    throw new CliError(`The x402 payment could not be made: ${(error as Error).message}`, EXIT.failure, "x402_failed");
  }
  if (!res.ok) throw await apiFailure(ctx, res);
  const body = (await res.json()) as Omit<TopUpResult, "payer">;
  return { ...body, payer: signer.account.address };
}

export async function readUsdc(rpcUrl: string, asset: Address, owner: Address): Promise<bigint> {
  const client = createPublicClient({ chain: base, transport: http(rpcUrl, { retryCount: 0, timeout: 10_000 }) });
  return client.readContract({ address: asset, abi: erc20Abi, functionName: "balanceOf", args: [owner] });
}
