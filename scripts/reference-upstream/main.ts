import { parseArgs } from "node:util";
import { DEFAULT_REFERENCE_API_KEY, parseUpstreamMode, startReferenceUpstream } from "./server";

const USAGE = `usage: npm run upstream -- [--port 8787] [--host 127.0.0.1] [--api-key K] [--mode MODE] [--token-delay MS]

A stand-in for a supplier's OpenAI-compatible provider: deterministic replies, honest usage, not a model.
POST /v1/chat/completions (stream: true answers SSE chunks as OpenAI does), GET /v1/models, GET /health.

--token-delay MS   a stream's wait per generated token (default 1; a delta carries a few tokens)
--mode MODE        the default for every request; a request's X-Upstream-Mode header replaces it.
                   One part, or several joined by "+", at most one of each kind: reasoning+die-after:3

  reply        ok                  honest answer (default)
               no-usage            no usage field (no usage chunk in a stream)
               bad-shape           200 JSON without choices (stream chunks without choices)
               inflate             "Yes." billed as 1,000,000 prompt and completion tokens
               truncate            text cut to 3 tokens, finish_reason "length"
               break-schema        JSON that breaks the requested schema (tool calls, json_schema)
               pad-reasoning       claims hidden reasoning for all of max_tokens when reasoning is asked for
               reasoning           reasoning_content before the answer (not with reasoning_effort "none")
               parallel-tools      calls every tool offered at once
               long:<n>            a text reply of n tokens (within max_tokens)
               substitute:<model>  another model's reply under the requested name
  latency      latency:<ms>        waits, then answers
  fault        timeout             never answers
               garbage             200 with a body that is not JSON
               error:<status>      that status with an OpenAI error body
               flaky:<n>           every n-th request a 500
  pace         pace:<ms>           this request's wait per generated token of a stream
  first token  first-token:<ms>    a stream's headers at once, then nothing for <ms>
  ending       die-after:<n>       the connection closes after n generated deltas (mid-body)
               error-after:<n>     after n deltas a data: {"error":{...}} event, then the end
               finish-error-after:<n>  after n deltas OpenRouter's error chunk (finish_reason "error"), then the end
               garbage-after:<n>   after n deltas a data line that is not JSON, then the end
               stall-after:<n>     after n deltas nothing until the client hangs up
               no-done             everything but data: [DONE]
               no-stream           stream: true is a 400 stream_not_supported (a server that cannot stream)
               json-stream         stream: true answered with the JSON completion (application/json)
  comments     comments            an SSE comment line before every event
`;

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
      "token-delay": { type: "string", default: "1" },
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
  const tokenDelayMs = Number(values["token-delay"]);
  if (!/^\d+(\.\d+)?$/.test(values["token-delay"]) || tokenDelayMs > 600_000) fail(`invalid --token-delay '${values["token-delay"]}'`);
  return { port, host: values.host, apiKey: values["api-key"], defaultMode: mode, tokenDelayMs };
}

async function main(): Promise<void> {
  const options = readOptions();
  const upstream = await startReferenceUpstream(options);
  console.log(`reference upstream (deterministic, not a model) listening`);
  console.log(`  base URL: ${upstream.url}`);
  console.log(`  API key:  ${upstream.apiKey}`);
  console.log(`  mode:     ${options.defaultMode} (override per request with X-Upstream-Mode)`);
  console.log(`  streams:  ${options.tokenDelayMs} ms per generated token`);

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
