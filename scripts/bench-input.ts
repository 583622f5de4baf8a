/**
 * `npm run bench:input`: what one request's input costs the event loop, as its size grows, for every walk over what a
 * stranger, a buyer or a supplier's upstream sends (issue 34): the body's scan, parse and checks on each route's schema
 * (lib/json-limits.ts, lib/http/body.ts, zod), the Responses translation, the prompt's material and the forwarded
 * fields, the tokenizer, the SIWE message, a query string, an x402 payment header, a supplier's answer (JSON or
 * streamed) and the probe judge. Each row prints the CPU milliseconds of one request (the least of 3 runs after a warm-up, so a shared
 * machine's slow spells do not count) at three sizes, and the growth from the first size to the last: about the size
 * ratio is linear, its square is quadratic. Figures are printed, never asserted. No database, chain or network: every
 * step runs in this process on the functions the routes run.
 * Usage: npm run bench:input [-- --only <substring of a row's label>]
 */
import { parseArgs } from "node:util";
import { clearMergeCache } from "gpt-tokenizer/encoding/o200k_base";

const { values: opts } = parseArgs({ options: { only: { type: "string" } } });

type Row = { label: string; sizes: number[]; unit: string; make: (size: number) => unknown; run: (input: never) => unknown };

/** CPU ms of one call, the least of three after one to warm up (the tokenizer yields between slices: its total work is what counts). */
async function cpuMsAsync(run: () => Promise<unknown>): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 4; i++) {
    const before = process.cpuUsage();
    await Promise.resolve()
      .then(run)
      .catch(() => undefined);
    const used = process.cpuUsage(before);
    if (i > 0) best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const zeros = (count: number) => `[${Array(count).fill("0").join(",")}]`;
const keys = (count: number) => `{${Array.from({ length: count }, (_, i) => `"k${i}":${i % 10}`).join(",")}}`;
const TOKEN_CHUNK = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1754401100,"model":"m","choices":[{"index":0,"delta":{"content":" tok"},"finish_reason":null}]}\n\n`;
const ARGS_CHUNK = `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"k\\": 1, "}}]}}]}\n\n`;
/** `count` copies of `chunk` as one stream's bytes, with its first tool call named and its end. */
const streamOf = (count: number, chunk: string) =>
  new TextEncoder().encode(
    `data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c","function":{"name":"f"}}]}}]}\n\n${chunk.repeat(count)}data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`,
  );
/** The bytes cut into reads of `size`. */
const pieces = (bytes: Uint8Array, size: number) =>
  Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
/** How many of `unit` bytes fit in `bytes`. */
const fit = (bytes: number, unit: number) => Math.max(1, Math.floor(bytes / unit));

async function main() {
  const [
    { env },
    { readJsonBody, parseInput },
    { VerifyBody },
    { ChatCompletionRequest, JsonSchemaObject },
    { ResponsesRequest },
    { toChatRequest, toResponse },
    { promptMaterial, tokenBounds, countMaterialTokens },
    { serializeForwardedFields },
    { POST: verify },
    { GET: book },
    { decodePayment },
    { parseUpstreamAnswer },
    { judgeAnswer },
    { generateProbeSet },
    { exceededJsonLimit },
    { ChatStream },
  ] = await Promise.all([
    import("../lib/env"),
    import("../lib/http/body"),
    import("../lib/auth/schemas"),
    import("../lib/router/schemas"),
    import("../lib/router/responses-schemas"),
    import("../lib/router/responses-translation"),
    import("../lib/upstream/tokens"),
    import("../lib/router/forwarded-fields"),
    import("../app/auth/verify/route"),
    import("../app/v1/market/book/route"),
    import("../lib/payments/x402"),
    import("../lib/upstream/answer"),
    import("../lib/probes/judge"),
    import("../lib/probes/catalog"),
    import("../lib/json-limits"),
    import("../lib/upstream/stream-answer"),
  ]);

  const request = (text: string) =>
    new Request("http://localhost:3000/x", { method: "POST", headers: { "content-type": "application/json" }, body: text });
  /** Reads and checks a body as route() does, from its text (the body's bytes are in memory, as the front door has them). */
  const body = (schema: Parameters<typeof parseInput>[0]) => async (text: string) =>
    parseInput(schema, await readJsonBody(request(text), Number.POSITIVE_INFINITY), "body");
  /** A refusal is an answer too: its cost is what is measured. */
  const sync = (run: (text: string) => Promise<unknown>) => (text: string) => run(text).catch(() => undefined);

  const chatWith = (fields: string) => `{"model":"m","messages":[{"role":"user","content":"hi"}],${fields}}`;
  const schemaTool = (properties: number) =>
    `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":${keys(properties).replace(/:(\d)/g, ':{"type":"string","description":"d$1"}')}}}}]`;
  const responsesWith = (input: string) => `{"model":"m","input":${input}}`;
  const sizes = [100_000, 300_000, 1_000_000];

  const rows: Row[] = [
    // ── what a stranger sends: the public sign-in, before any credential ──
    { label: "POST /auth/verify: nested arrays", sizes, unit: "B", make: (b) => nested(fit(b, 2)), run: sync(body(VerifyBody)) },
    { label: "POST /auth/verify: wide array of numbers", sizes, unit: "B", make: (b) => zeros(fit(b, 2)), run: sync(body(VerifyBody)) },
    { label: "POST /auth/verify: object of unknown keys", sizes, unit: "B", make: (b) => keys(fit(b, 11)), run: sync(body(VerifyBody)) },
    {
      label: "POST /auth/verify (route): a message the grammar refuses",
      sizes: [1_000, 4_000, 8_192],
      unit: "B",
      make: (b) =>
        JSON.stringify({ message: `${"a".repeat(b - 60)} wants you to sign in with your Ethereum account:\n0x`, signature: "0x00" }),
      run: (text: string) => verify(request(text)),
    },
    {
      label: "POST /auth/verify (route): a message of newlines and spaces",
      sizes: [1_000, 4_000, 8_192],
      unit: "B",
      make: (b) => JSON.stringify({ message: "\n \n- ".repeat(fit(b, 5)).slice(0, b), signature: "0x00" }),
      run: (text: string) => verify(request(text)),
    },
    // ── what a buyer sends: chat completions and responses ──
    {
      label: "chat: 1,000 messages of text",
      sizes,
      unit: "B",
      make: (b) =>
        `{"model":"m","messages":[${Array(1_000)
          .fill(`{"role":"user","content":"${"x".repeat(fit(b, 1_000) - 30)}"}`)
          .join(",")}]}`,
      run: sync(body(ChatCompletionRequest)),
    },
    {
      label: "chat: one tool schema of many properties",
      sizes,
      unit: "B",
      make: (b) => chatWith(schemaTool(fit(b, 48))),
      run: sync(body(ChatCompletionRequest)),
    },
    {
      label: "chat: tool schema nested to the limit, wide at the bottom",
      sizes,
      unit: "B",
      make: (b) =>
        chatWith(
          `"tools":[{"type":"function","function":{"name":"f","parameters":${'{"a":'.repeat(30)}${zeros(fit(b, 2))}${"}".repeat(30)}}}]`,
        ),
      run: sync(body(ChatCompletionRequest)),
    },
    {
      label: "chat: 1,000 messages of invalid content parts (issues)",
      sizes,
      unit: "B",
      make: (b) =>
        `{"model":"m","messages":[${Array(1_000)
          .fill(
            `{"role":"user","content":[${Array(Math.min(1_000, fit(b, 14_000)))
              .fill('{"type":"x"}')
              .join(",")}]}`,
          )
          .join(",")}]}`,
      run: sync(body(ChatCompletionRequest)),
    },
    {
      label: "responses: 1,000 items (messages, calls, outputs)",
      sizes,
      unit: "B",
      make: (b) => {
        const text = "y".repeat(Math.max(1, fit(b, 1_000) - 120));
        const items = Array.from({ length: 1_000 }, (_, i) =>
          i % 3 === 0
            ? `{"role":"user","content":"${text}"}`
            : i % 3 === 1
              ? `{"type":"function_call","call_id":"c${i}","name":"f","arguments":"${text}"}`
              : `{"type":"function_call_output","call_id":"c${i - 1}","output":"${text}"}`,
        );
        return responsesWith(`[${items.join(",")}]`);
      },
      run: sync(body(ResponsesRequest)),
    },
    {
      label: "responses: reasoning items sent back (summaries of numbers)",
      sizes,
      unit: "B",
      make: (b) =>
        responsesWith(
          `[${Array(999)
            .fill(`{"type":"reasoning","summary":${zeros(Math.min(1_000, fit(b, 2_000)))}}`)
            .join(",")}]`,
        ),
      run: sync(body(ResponsesRequest)),
    },
    {
      label: "responses: 1,000 invalid items (issues)",
      sizes,
      unit: "B",
      make: (b) =>
        responsesWith(
          `[${Array(1_000)
            .fill(
              `{"type":"message","role":"user","content":[${Array(Math.min(1_000, fit(b, 14_000)))
                .fill('{"type":"x"}')
                .join(",")}]}`,
            )
            .join(",")}]`,
        ),
      run: sync(body(ResponsesRequest)),
    },
    {
      label: "JSON schema depth check: an object of many keys",
      sizes,
      unit: "B",
      make: (b) => JSON.parse(keys(fit(b, 11))) as unknown,
      run: (value: unknown) => JsonSchemaObject.safeParse(value),
    },
    {
      label: "after validation: responses → chat, prompt material, forwarded fields",
      sizes,
      unit: "B",
      make: (b) => {
        const text = "y".repeat(Math.max(1, fit(b, 1_000) - 120));
        const items = Array.from({ length: 1_000 }, (_, i) =>
          i % 2 === 0 ? { role: "user", content: text } : { type: "function_call", call_id: `c${i}`, name: "f", arguments: text },
        );
        return parseInput(ResponsesRequest, { model: "m", input: items }, "body");
      },
      run: (req: Parameters<typeof toChatRequest>[0]) => {
        const chat = toChatRequest(req);
        tokenBounds(promptMaterial(chat));
        serializeForwardedFields(chat);
        toResponse(req, {
          id: "chatcmpl-x",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop", logprobs: null }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        } as unknown as Parameters<typeof toResponse>[1]);
      },
    },
    // ── a query string and a payment header: bounded by Node's 16 KB of headers ──
    {
      label: "GET /v1/market/book (route): a query of many parameters",
      sizes: [1_000, 4_000, 15_000],
      unit: "B",
      make: (b) => `http://localhost:3000/v1/market/book?${Array.from({ length: fit(b, 8) }, (_, i) => `p${i}=1`).join("&")}`,
      run: (url: string) => book(new Request(url), { params: Promise.resolve({}) }),
    },
    {
      label: "x402 payment header: nested arrays",
      sizes: [1_000, 4_000, 15_000],
      unit: "B",
      make: (b) => Buffer.from(`{"x402Version":2,"payload":${nested(fit(b, 2.7))}}`).toString("base64"),
      run: (header: string) => decodePayment(header),
    },
    // ── what a supplier's upstream answers (4 MiB at most) ──
    {
      label: "supplier answer: logprobs of many tokens (scan, parse, read)",
      sizes: [400_000, 1_300_000, 4_000_000],
      unit: "B",
      make: (b) =>
        `{"choices":[{"message":{"role":"assistant","content":"x"},"finish_reason":"stop","logprobs":{"content":[${Array(fit(b, 60))
          .fill('{"token":"a","logprob":-0.1,"bytes":[97],"top_logprobs":[]}')
          .join(",")}]}}]}`,
      run: (text: string) => {
        if (!exceededJsonLimit(text, { maxDepth: env.MAX_JSON_DEPTH, maxValues: Number.POSITIVE_INFINITY }))
          parseUpstreamAnswer(JSON.parse(text));
      },
    },
    {
      label: "supplier answer: nested arrays (refused by the scan)",
      sizes: [400_000, 1_300_000, 4_000_000],
      unit: "B",
      make: (b) => `{"choices":[{"message":{"role":"assistant","content":"x"},"logprobs":{"content":${nested(fit(b, 2))}}}]}`,
      run: (text: string) => exceededJsonLimit(text, { maxDepth: env.MAX_JSON_DEPTH, maxValues: Number.POSITIVE_INFINITY }),
    },
    // ── what a supplier's upstream streams (64 MiB at most; what is kept of it, 4 MiB) ──
    {
      label: "supplier stream: one-token chunks in 16 kB reads (SSE, chunk, accumulate)",
      sizes: [4_000_000, 13_000_000, 40_000_000],
      unit: "B",
      make: (b) => pieces(streamOf(fit(b, TOKEN_CHUNK.length), TOKEN_CHUNK), 16_384),
      run: (reads: Uint8Array[]) => readStream(reads),
    },
    {
      label: "supplier stream: the same, one byte a read",
      sizes: [400_000, 1_300_000, 4_000_000],
      unit: "B",
      make: (b) => pieces(streamOf(fit(b, TOKEN_CHUNK.length), TOKEN_CHUNK), 1),
      run: (reads: Uint8Array[]) => readStream(reads),
    },
    {
      label: "supplier stream: tool-call argument fragments to one call",
      sizes: [400_000, 1_300_000, 4_000_000],
      unit: "B",
      make: (b) => pieces(streamOf(fit(b, ARGS_CHUNK.length), ARGS_CHUNK), 16_384),
      run: (reads: Uint8Array[]) => readStream(reads),
    },
    {
      label: "supplier stream: a line that never ends (refused at 4 MiB)",
      sizes: [400_000, 1_300_000, 4_000_000],
      unit: "B",
      make: (b) => pieces(new TextEncoder().encode(`data: ${"x".repeat(b)}`), 16_384),
      run: (reads: Uint8Array[]) => readStream(reads),
    },
    {
      label: "probe judge: a json answer of nested arrays",
      sizes: [400_000, 1_300_000, 4_000_000],
      unit: "B",
      make: (b) => `{"answer":${nested(fit(b, 2))}}`,
      run: (content: string) =>
        judgeAnswer(
          generateProbeSet("bench", { billsReasoning: false }).find((p) => p.name === "json")!,
          "m",
          "m",
          {
            message: { role: "assistant", content },
            finishReason: "stop",
            logprobs: null,
            systemFingerprint: null,
            usage: null,
          },
        ),
    },
  ];

  /** A supplier's stream as the socket delivers it: every read through one reader, then its end. */
  function readStream(reads: Uint8Array[]) {
    const stream = new ChatStream();
    for (const read of reads) stream.push(read);
    return stream.end();
  }

  console.log(`\nsvc input bench: CPU ms of one request by input size (least of 3), node ${process.version}`);
  console.log(
    `limits: MAX_BODY_BYTES ${env.MAX_BODY_BYTES}, MAX_JSON_DEPTH ${env.MAX_JSON_DEPTH}, MAX_JSON_VALUES ${env.MAX_JSON_VALUES}\n`,
  );
  for (const row of rows) {
    if (opts.only && !row.label.includes(opts.only)) continue;
    const figures: number[] = [];
    for (const size of row.sizes) {
      const input = row.make(size);
      figures.push(await cpuMsAsync(async () => void (await (row.run as (input: unknown) => unknown)(input))));
    }
    const cells = row.sizes.map((size, i) => `${formatSize(size)} ${figures[i].toFixed(1).padStart(7)} ms`).join("   ");
    const growth =
      figures[0] > 0.05
        ? `×${(figures.at(-1)! / figures[0]).toFixed(1)} for ×${(row.sizes.at(-1)! / row.sizes[0]).toFixed(0)} the size`
        : "";
    console.log(`${row.label.padEnd(72)} ${cells}   ${growth}`);
  }
  // The tokenizer works in slices and yields between them: its total work per request, not a stall. Its merge cache is
  // emptied before each run: a stranger's text is new to it, and a warm cache would measure the cache.
  const costly = (chars: number, from: number, span: number) => {
    let seed = 11;
    return Array.from({ length: chars }, () =>
      String.fromCharCode(from + ((seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff) % span)),
    ).join("");
  };
  for (const [label, make] of [
    ["tokenizer (sliced, total CPU): random CJK", (b: number) => costly(fit(b, 3), 0x4e00, 20_000)],
    ["tokenizer (sliced, total CPU): one emoji repeated", (b: number) => "😀".repeat(fit(b, 4))],
    [
      "tokenizer (sliced, total CPU): random 4-byte letters",
      (b: number) => Array.from({ length: fit(b, 4) }, (_, i) => String.fromCodePoint(0x20000 + ((i * 7919) % 0xa000))).join(""),
    ],
    ["tokenizer (sliced, total CPU): spaces then a letter", (b: number) => `${" ".repeat(b - 1)}x`],
  ] as const) {
    if (opts.only && !label.includes(opts.only)) continue;
    const figures: number[] = [];
    for (const size of sizes) {
      const text = make(size);
      figures.push(
        await cpuMsAsync(() => {
          clearMergeCache();
          return countMaterialTokens({ texts: [text], fixedTokens: 0, images: 0 });
        }),
      );
    }
    const cells = sizes.map((size, i) => `${formatSize(size)} ${figures[i].toFixed(1).padStart(7)} ms`).join("   ");
    console.log(`${label.padEnd(72)} ${cells}   ×${(figures.at(-1)! / figures[0]).toFixed(1)} for ×10 the size`);
  }
  // Nothing here is meant to keep the process alive (the rate limiter's sweep timer): it is done.
  process.exit(0);
}

function formatSize(bytes: number): string {
  return (bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(1)} MB` : `${Math.round(bytes / 1_000)} kB`).padStart(7);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
