import type { ServerResponse } from "node:http";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { countReplyTokens, countTextTokens } from "../../lib/upstream/tokens";
import type { EndingMode } from "./modes";

/**
 * The reference upstream's answer to `stream: true`, as OpenAI streams chat completions: the completion the JSON
 * answer would be, sent as `chat.completion.chunk` events. A role delta first; then the generated text a few tokens
 * per delta (reasoning_content, then content; a tool call as a delta with its index, id, type and name, then its
 * argument fragments, parallel calls one after the other by index); a chunk with finish_reason; when
 * `stream_options.include_usage` is set, a chunk with empty choices and the usage the JSON answer claims (every chunk
 * before it with `"usage": null`); then `data: [DONE]`. The deltas concatenate to the JSON answer's message.
 *
 * Each generated delta waits its tokens × the pace, so a reader sees the first text while the rest is still coming.
 * Writes respect backpressure: a client that does not read holds the stream at what the socket buffers, never an
 * answer's worth in memory. A client that hangs up stops the generation (the engine stops, as a provider's does), and
 * the stream's record says so. An ending mode makes it end otherwise (modes.ts).
 */

/** Pre-tokens (o200k's split: a word with its leading space, a number, a run of punctuation) per generated delta. */
export const PIECES_PER_DELTA = 3;
/** Streams whose records are kept (the oldest go first); the counters count every stream. */
const MAX_RECORDS = 10_000;

export type ToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };

export type AnswerMessage = {
  role: "assistant";
  content: string | null;
  reasoning_content?: string;
  tool_calls?: ToolCall[];
};

export type CompletionBase = { id: string; object: "chat.completion"; created: number; model: string; system_fingerprint: string };

/** One completion, whichever way it is sent: the JSON answer and the stream both render these parts. */
export type CompletionParts = { base: CompletionBase; message: AnswerMessage; finish: string; usage: Record<string, unknown> };

export type StreamOptions = {
  /** `stream_options.include_usage`. */
  includeUsage: boolean;
  /** The usage chunk is sent (when asked for); false: the upstream never reports usage in a stream. */
  reportsUsage: boolean;
  /** false: chunks without `choices` (mode bad-shape). */
  withChoices: boolean;
  tokenDelayMs: number;
  firstTokenMs: number;
  ending: EndingMode | null;
  comments: boolean;
};

/**
 * How a stream ended, seen from the upstream: it sent everything ("completed"), the client hung up first
 * ("cancelled"), an ending mode cut it ("died": the connection closed mid-body; "errored": an error event, an error
 * chunk or garbage, then the end), or the server stopped.
 */
export type StreamEnd = "completed" | "cancelled" | "died" | "errored" | "stopped";

export type StreamRecord = {
  /** The completion's id (every chunk's `id`). */
  readonly id: string;
  readonly model: string;
  /** null while the stream runs. */
  end: StreamEnd | null;
  /** Generated deltas written: reasoning and content fragments, tool-call headers and argument fragments. */
  chunks: number;
  /** Once ended: the completion tokens of what was written, counted as the usage counts them (lib/upstream/tokens.ts). */
  completionTokens: number | null;
  /** The client is not reading: the stream waits for its socket to drain. */
  waitingForClient: boolean;
};

/** The streams of one server: their records, and counters a test can wait on. */
export class StreamLog {
  readonly records: StreamRecord[] = [];
  cancelled = 0;
  started = 0;
  stopping = false;

  start(id: string, model: string): StreamRecord {
    const record: StreamRecord = { id, model, end: null, chunks: 0, completionTokens: null, waitingForClient: false };
    this.started += 1;
    this.records.push(record);
    if (this.records.length > MAX_RECORDS) this.records.shift();
    return record;
  }

  finish(record: StreamRecord, end: StreamEnd, completionTokens: number): void {
    record.completionTokens = completionTokens;
    record.waitingForClient = false;
    record.end = end;
    if (end === "cancelled") this.cancelled += 1;
  }
}

type Delta = Record<string, unknown>;
type Sent = { content: string; reasoning: string; calls: ToolCall[] };
type Generated = { delta: Delta; text: string; add: (sent: Sent) => void };

const SPLIT = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, "gu");

/** The text in pieces of a few tokens, which concatenate to it. */
export function* piecesOf(text: string): Generator<string> {
  let piece = "";
  let count = 0;
  let covered = 0;
  for (const match of text.matchAll(SPLIT)) {
    // The split covers every character; should it ever skip one, the skipped text joins the next piece.
    piece += text.slice(covered, match.index + match[0].length);
    covered = match.index + match[0].length;
    if (++count === PIECES_PER_DELTA) {
      yield piece;
      piece = "";
      count = 0;
    }
  }
  piece += text.slice(covered);
  if (piece !== "") yield piece;
}

function* generatedDeltas(message: AnswerMessage): Generator<Generated> {
  for (const text of piecesOf(message.reasoning_content ?? "")) {
    yield { delta: { reasoning_content: text }, text, add: (s) => (s.reasoning += text) };
  }
  for (const text of piecesOf(message.content ?? "")) {
    yield { delta: { content: text }, text, add: (s) => (s.content += text) };
  }
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    const header = { index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } };
    yield {
      delta: { tool_calls: [header] },
      text: call.function.name,
      add: (s) => s.calls.push({ id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }),
    };
    for (const text of piecesOf(call.function.arguments)) {
      yield {
        delta: { tool_calls: [{ index, function: { arguments: text } }] },
        text,
        add: (s) => (s.calls[index].function.arguments += text),
      };
    }
  }
}

/** Resolves after `ms`, or at once when the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

/** Sends the completion as a stream on `res` (nothing sent yet), and records how it went in `log`. */
export async function streamCompletion(res: ServerResponse, parts: CompletionParts, options: StreamOptions, log: StreamLog): Promise<void> {
  const record = log.start(parts.base.id, parts.base.model);
  const hangUp = new AbortController();
  const signal = hangUp.signal;
  let cutByUs = false;
  res.on("close", () => {
    if (!res.writableFinished && !cutByUs) hangUp.abort();
  });
  const sent: Sent = { content: "", reasoning: "", calls: [] };
  const chunkBase = { ...parts.base, object: "chat.completion.chunk" };

  /** Writes one event; waits while the client is not reading. */
  async function send(event: string): Promise<void> {
    if (signal.aborted) return;
    const ok = res.write(options.comments ? `: reference upstream processing\n\n${event}` : event);
    if (ok || signal.aborted) return;
    record.waitingForClient = true;
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off("drain", done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      res.on("drain", done);
      signal.addEventListener("abort", done);
    });
    record.waitingForClient = false;
  }

  const data = (payload: unknown) => send(`data: ${JSON.stringify(payload)}\n\n`);
  const usageField = options.includeUsage && options.reportsUsage ? { usage: null } : {};
  const chunk = (delta: Delta, finishReason: string | null) =>
    data(
      options.withChoices
        ? { ...chunkBase, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...usageField }
        : { ...chunkBase, ...usageField },
    );

  async function endOtherwise(ending: EndingMode): Promise<StreamEnd | null> {
    switch (ending.kind) {
      case "die-after":
        // Whatever was written reaches the client, then the connection closes in the middle of the body.
        cutByUs = true;
        res.socket?.destroySoon();
        return "died";
      case "error-after":
        await data({
          error: {
            message: `Reference upstream failed mid-stream (${ending.kind}:${ending.after})`,
            type: "server_error",
            param: null,
            code: "injected_error",
          },
        });
        return "errored";
      case "finish-error-after":
        // OpenRouter's mid-stream error: a chunk with a top-level error and finish_reason "error".
        await data({
          ...chunkBase,
          error: { code: "server_error", message: `Reference upstream failed mid-stream (${ending.kind}:${ending.after})` },
          choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
        });
        return "errored";
      case "garbage-after":
        await send("data: <html>upstream garbage: this is not JSON {\n\n");
        return "errored";
      case "stall-after":
        if (!signal.aborted) await new Promise((resolve) => signal.addEventListener("abort", resolve));
        return null;
      default:
        return null;
    }
  }

  async function run(): Promise<StreamEnd | null> {
    const { ending } = options;
    const cutAfter = ending && "after" in ending ? ending.after : Infinity;
    await pause(options.firstTokenMs, signal);
    await chunk({ role: "assistant", content: parts.message.content === null ? null : "" }, null);
    for (const generated of generatedDeltas(parts.message)) {
      if (record.chunks >= cutAfter) break;
      if (options.tokenDelayMs > 0) await pause(options.tokenDelayMs * countTextTokens(generated.text), signal);
      if (signal.aborted) return null;
      await chunk(generated.delta, null);
      generated.add(sent);
      record.chunks += 1;
    }
    if (signal.aborted) return null;
    if (ending && "after" in ending) return endOtherwise(ending);
    await chunk({}, parts.finish);
    if (options.includeUsage && options.reportsUsage) {
      await data(options.withChoices ? { ...chunkBase, choices: [], usage: parts.usage } : { ...chunkBase, usage: parts.usage });
    }
    if (ending?.kind !== "no-done") await send("data: [DONE]\n\n");
    return signal.aborted ? null : "completed";
  }

  res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", "X-Reference-Upstream": "1" });
  res.flushHeaders();
  let ended: StreamEnd | null = null;
  try {
    ended = await run();
  } finally {
    if (ended !== "died") res.end();
    const reply = { content: sent.content, reasoning_content: sent.reasoning, tool_calls: sent.calls };
    log.finish(record, ended ?? (log.stopping ? "stopped" : "cancelled"), await countReplyTokens(reply));
  }
}
