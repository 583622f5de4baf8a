/**
 * What the browser needs to know about this deployment. The root layout (a server component) builds it
 * from lib/env.ts and hands it to the client Providers as a prop: no NEXT_PUBLIC_ variables.
 */
export type ClientSettings = {
  /** Public origin; its host is the SIWE domain. */
  origin: string;
  chainId: number;
  /** Base RPC for read-only calls from the browser (wallet USDC balance); signing goes through the wallet. */
  rpcUrl: string;
  usdcAddress: `0x${string}`;
  topUpMin: string;
  topUpMax: string;
  withdrawalMin: string;
  platformFeeBps: number;
  platformDefaultMaxPriceCents: number;
  /** Block explorer transaction URL prefix; null on a local chain. */
  explorerTxUrl: string | null;
  /** WalletConnect project id; null: no WalletConnect connector. */
  walletConnectProjectId: string | null;
  /**
   * A dev deployment (SVC_ENV is not production): its chain is a local test chain that reuses Base's chain id and
   * USDC domain, so the top-up form asks only anvil's funded dev accounts to sign (lib/chain/dev-wallet.ts).
   */
  devChain: boolean;
};
