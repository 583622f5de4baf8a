import { base } from "viem/chains";
import { createConfig, http, injected, type CreateConnectorFn } from "wagmi";
import { coinbaseWallet } from "wagmi/connectors/coinbaseWallet";
import type { ClientSettings } from "@/lib/browser/settings";
import { createTestConnector } from "@/lib/browser/test-connector";

/** Whether this build contains the in-process test wallet (only builds made with SVC_TEST_WALLET=1). */
export const hasTestWallet = createTestConnector !== null;

/**
 * wagmi for the browser: Base only (chain id 8453) read through the deployment's RPC; wallets announced
 * over EIP-6963 are discovered automatically, `injected()` covers a lone window.ethereum, and Coinbase Wallet.
 */
export function createWagmiConfig(settings: ClientSettings) {
  const chain = { ...base, rpcUrls: { default: { http: [settings.rpcUrl] } } };
  const connectors: CreateConnectorFn[] = [
    injected({ shimDisconnect: true }),
    coinbaseWallet({ appName: "svc", preference: { options: "all" } }),
  ];
  if (createTestConnector) connectors.push(createTestConnector({ rpcUrl: settings.rpcUrl }));
  return createConfig({
    chains: [chain],
    connectors,
    transports: { [chain.id]: http(settings.rpcUrl) },
    multiInjectedProviderDiscovery: true,
    ssr: true,
  });
}
