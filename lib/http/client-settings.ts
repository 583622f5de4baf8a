import "server-only";
import { BASE_CHAIN_ID } from "@/lib/chain/constants";
import { deployment, env, publicRpcUrl } from "@/lib/env";
import type { ClientSettings } from "@/lib/browser/settings";

/** Server side only (reads lib/env.ts): the settings the root layout hands to the browser. */
export function getClientSettings(): ClientSettings {
  const rpcHost = new URL(publicRpcUrl).hostname;
  const localChain = rpcHost === "127.0.0.1" || rpcHost === "localhost" || rpcHost === "::1" || rpcHost === "[::1]";
  return {
    origin: deployment.origin,
    chainId: BASE_CHAIN_ID,
    rpcUrl: publicRpcUrl,
    usdcAddress: env.USDC_ADDRESS as `0x${string}`,
    topUpMin: env.TOPUP_MIN_USD,
    topUpMax: env.TOPUP_MAX_USD,
    withdrawalMin: env.WITHDRAWAL_MIN_USD,
    platformFeeBps: env.PLATFORM_FEE_BPS,
    platformDefaultMaxPriceCents: env.DEFAULT_MAX_PRICE_CENTS,
    explorerTxUrl: localChain ? null : "https://basescan.org/tx/",
    walletConnectProjectId: env.WALLETCONNECT_PROJECT_ID ?? null,
    devChain: env.SVC_ENV !== "production",
  };
}
