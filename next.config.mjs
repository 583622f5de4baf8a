/**
 * SVC_TEST_WALLET=1 at build time (e2e builds only) swaps the test-wallet stub for the real in-process
 * test connector. Without it the connector module is never resolved, so production bundles cannot contain it.
 */
// eslint-disable-next-line no-restricted-properties -- build configuration, read before any app module loads
const testWallet = process.env.SVC_TEST_WALLET === "1";
const TEST_CONNECTOR = "@/lib/browser/test-connector";
const TEST_CONNECTOR_ENABLED = "./lib/browser/test-connector.enabled.ts";

/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Prisma's query compiler loads a WASM file from node_modules at run time; keep these out of the bundle.
  serverExternalPackages: ["@prisma/client", "@prisma/adapter-pg", "pg", "gpt-tokenizer"],
  turbopack: {
    resolveAlias: testWallet ? { [TEST_CONNECTOR]: TEST_CONNECTOR_ENABLED } : {},
  },
  webpack(config) {
    if (testWallet) {
      config.resolve.alias = {
        ...config.resolve.alias,
        [`${TEST_CONNECTOR}$`]: new URL(TEST_CONNECTOR_ENABLED, import.meta.url).pathname,
      };
    }
    return config;
  },
};

export default nextConfig;
