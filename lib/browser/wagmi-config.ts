import { base } from "viem/chains";
import { createConfig, http, injected, type CreateConnectorFn } from "wagmi";
import { coinbaseWallet } from "wagmi/connectors/coinbaseWallet";
import { walletConnect } from "wagmi/connectors/walletConnect";
import type { ClientSettings } from "@/lib/browser/settings";
import { createTestConnector } from "@/lib/browser/test-connector";

/** Whether this build contains the in-process test wallet (only builds made with SVC_TEST_WALLET=1). */
export const hasTestWallet = createTestConnector !== null;

/**
 * wagmi for the browser: Base only (chain id 8453) read through the deployment's RPC; wallets announced
 * over EIP-6963 are discovered automatically, `injected()` covers a lone window.ethereum, and Coinbase Wallet.
 * WalletConnect (a QR code on desktop, a deep link into the wallet app on a phone) joins when the deployment
 * sets WALLETCONNECT_PROJECT_ID; its SDK loads only when picked. The Coinbase Wallet connector already offers
 * the Coinbase smart wallet (passkeys, nothing to install). wagmi's baseAccount connector is left out: its SDK
 * (@base-org/account) drags in a Solana x402 stack that does not build here.
 */
export function createWagmiConfig(settings: ClientSettings) {
  const chain = { ...base, rpcUrls: { default: { http: [settings.rpcUrl] } } };
  const connectors: CreateConnectorFn[] = [
    injected({ shimDisconnect: true }),
    coinbaseWallet({ appName: "svc", preference: { options: "all" } }),
  ];
  if (settings.walletConnectProjectId) {
    connectors.push(
      walletConnect({
        projectId: settings.walletConnectProjectId,
        showQrModal: true,
        metadata: {
          name: "svc",
          description: "The open inference marketplace",
          url: settings.origin,
          icons: [`${settings.origin}/icon.svg`],
        },
      }),
    );
  }
  if (createTestConnector) connectors.push(createTestConnector({ rpcUrl: settings.rpcUrl }));
  return createConfig({
    chains: [chain],
    connectors,
    transports: { [chain.id]: http(settings.rpcUrl) },
    multiInjectedProviderDiscovery: true,
    ssr: true,
  });
}
