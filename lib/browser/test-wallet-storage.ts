/**
 * localStorage keys the in-process test wallet reads (test builds only). Playwright sets them before a page
 * loads to choose which anvil dev account the wallet signs with and which chain it starts on.
 */
export const TEST_WALLET_ACCOUNT_KEY = "svc:test-wallet:account";
export const TEST_WALLET_CHAIN_KEY = "svc:test-wallet:chain";
export const TEST_WALLET_CONNECTED_KEY = "svc:test-wallet:connected";
/** "1": the wallet refuses to sign messages (SIWE), as a user pressing Reject would (code 4001). */
export const TEST_WALLET_REJECT_SIGN_IN_KEY = "svc:test-wallet:reject-sign-in";
/** "1": the wallet refuses to sign typed data (a top-up's EIP-3009 authorization), as a user pressing Reject would. */
export const TEST_WALLET_REJECT_PAYMENT_KEY = "svc:test-wallet:reject-payment";
/**
 * A window event Playwright dispatches after changing TEST_WALLET_ACCOUNT_KEY (and optionally `detail.chainId`):
 * the wallet announces the new account or chain, as an extension does when the user switches in it.
 */
export const TEST_WALLET_CHANGED_EVENT = "svc:test-wallet:changed";
