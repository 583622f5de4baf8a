import type { CreateConnectorFn } from "wagmi";

/**
 * Production stub of the test wallet: there is none. A build made with SVC_TEST_WALLET=1 resolves this
 * module to ./test-connector.enabled.ts instead (next.config.mjs), so only e2e builds contain the
 * in-process signer and the public anvil dev keys it signs with.
 */
export type TestConnectorFactory = (options: { rpcUrl: string }) => CreateConnectorFn;

export const createTestConnector: TestConnectorFactory | null = null;
