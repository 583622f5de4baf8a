import { defineConfig, devices } from "@playwright/test";
import { APP_ORIGIN } from "./e2e/fixtures/stack";

/**
 * `npm run test:e2e`: Debian's chromium (Playwright cannot download its own browser here) against the real
 * stack, brought up once per run by scripts/e2e-stack.ts: production build with the test wallet, database,
 * local chain, reference upstream. Tests share that one stack, so they run one at a time.
 */
// eslint-disable-next-line no-restricted-properties -- test runner configuration
const env = process.env;

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results/artifacts",
  fullyParallel: false,
  workers: 1,
  forbidOnly: !!env.CI,
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 20_000 },
  reporter: env.CI ? [["list"], ["html", { open: "never", outputFolder: "playwright-report" }]] : [["list"]],
  use: {
    baseURL: APP_ORIGIN,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"], viewport: { width: 1280, height: 800 } } }],
  webServer: {
    command: "node --import tsx --import ./server/server-modules.mjs scripts/e2e-stack.ts",
    url: `${APP_ORIGIN}/healthz`,
    // A production build comes first: a few minutes on a small machine.
    timeout: 600_000,
    reuseExistingServer: env.SVC_E2E_REUSE === "1",
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 15_000 },
  },
});
