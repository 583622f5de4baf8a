/**
 * localStorage keys the in-process test wallet reads (test builds only). Playwright sets them before a page
 * loads to choose which anvil dev account the wallet signs with and which chain it starts on.
 */
export const TEST_WALLET_ACCOUNT_KEY = "svc:test-wallet:account";
export const TEST_WALLET_CHAIN_KEY = "svc:test-wallet:chain";
export const TEST_WALLET_CONNECTED_KEY = "svc:test-wallet:connected";
