import { parseArgs } from "node:util";
import { DEFAULT_REFERENCE_API_KEY, parseUpstreamMode, startReferenceUpstream } from "./server";

const USAGE =
  "usage: npx tsx scripts/reference-upstream/main.ts [--port 8787] [--host 127.0.0.1] [--api-key K] " +
  "[--mode ok|latency:<ms>|error:<status>|flaky:<n>|substitute:<model>|timeout|garbage|no-usage|bad-shape|inflate|truncate|break-schema|pad-reasoning]";

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

function readOptions() {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "8787" },
      host: { type: "string", default: "127.0.0.1" },
      "api-key": { type: "string", default: DEFAULT_REFERENCE_API_KEY },
      mode: { type: "string", default: "ok" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`invalid --port '${values.port}'`);
  const mode = parseUpstreamMode(values.mode);
  if (!mode) fail(`invalid --mode '${values.mode}'`);
  return { port, host: values.host, apiKey: values["api-key"], defaultMode: mode };
}

async function main(): Promise<void> {
  const options = readOptions();
  const upstream = await startReferenceUpstream(options);
  console.log(`reference upstream (deterministic, not a model) listening`);
  console.log(`  base URL: ${upstream.url}`);
  console.log(`  API key:  ${upstream.apiKey}`);
  console.log(`  mode:     ${options.defaultMode} (override per request with X-Upstream-Mode)`);

  const shutdown = async (signal: string) => {
    console.log(`\n${signal}: stopping reference upstream`);
    await upstream.stop();
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
