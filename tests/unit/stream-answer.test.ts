import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_RESPONSE_BYTES } from "@/lib/upstream/client";
import { ChatStream, TOOL_CALL_BYTES, type ChatStreamLimits, type StreamEvent } from "@/lib/upstream/stream-answer";

const encode = (text: string) => new TextEncoder().encode(text);
const data = (json: unknown) => `data: ${typeof json === "string" ? json : JSON.stringify(json)}\n\n`;
const delta = (d: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  data({ object: "chat.completion.chunk", choices: [{ index: 0, delta: d, finish_reason: finish }], ...extra });
const DONE = "data: [DONE]\n\n";

function read(text: string, limits: Partial<ChatStreamLimits> = {}) {
  const stream = new ChatStream(limits);
  const events = stream.push(encode(text));
  return { stream, events, outcome: stream.end() };
}

describe("reading a streamed chat completion", () => {
  it("assembles tool calls by index from fragments, and index-less ones by id (a new id is a new call)", () => {
    const indexed = read(
      delta({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "g", arguments: "" } }] }) +
        delta({ tool_calls: [{ index: 0, id: "call_a", function: { name: "f" } }] }) +
        delta({ tool_calls: [{ index: 1, function: { arguments: '{"y":' } }] }) +
        delta({ tool_calls: [{ index: 1, function: { arguments: "2}" } }] }) +
        delta({}, "tool_calls") +
        DONE,
    );
    expect(indexed.outcome).toMatchObject({ ok: true, answer: { finishReason: "tool_calls" } });
    expect(indexed.stream.partial().message.tool_calls).toEqual([
      { id: "call_a", type: "function", function: { name: "f", arguments: "{}" } },
      { id: "call_b", type: "function", function: { name: "g", arguments: '{"y":2}' } },
    ]);

    const indexless = read(
      delta({ tool_calls: [{ id: "a", function: { name: "f", arguments: '{"x":' } }] }) +
        delta({ tool_calls: [{ function: { arguments: "1}" } }] }) +
        delta({ tool_calls: [{ id: "b", function: { name: "g", arguments: { z: true } } }] }) +
        delta({ tool_calls: [{ id: "a", function: { arguments: "" } }] }) +
        delta({}, "tool_calls") +
        DONE,
    );
    expect(indexless.stream.partial().message.tool_calls).toEqual([
      { id: "a", type: "function", function: { name: "f", arguments: '{"x":1}' } },
      { id: "b", type: "function", function: { name: "g", arguments: '{"z":true}' } },
    ]);
  });

  it("takes the last usage standing, from usage or x_groq.usage; usage: null erases nothing", () => {
    const usage = (prompt: number, completion: number) => ({ prompt_tokens: prompt, completion_tokens: completion });
    const { outcome } = read(
      delta({ content: "a" }, null, { usage: usage(5, 1) }) +
        delta({ content: "b" }, null, { usage: null }) +
        delta({}, "stop", { x_groq: { usage: usage(5, 2) } }) +
        data({ choices: [], usage: null }) +
        DONE,
    );
    expect(outcome).toMatchObject({ ok: true, answer: { usage: { promptTokens: 5, completionTokens: 2 } } });
  });

  it("reads the first choice only, and a whole message sent as one chunk", () => {
    const { outcome } = read(
      data({ choices: [{ index: 1, delta: { content: "other" } }] }) +
        data({ choices: [{ index: 0, message: { role: "assistant", content: "all at once" }, finish_reason: "stop" }] }),
    );
    expect(outcome).toMatchObject({ ok: true, sawDone: false, answer: { message: { content: "all at once" } } });
  });

  it("ends complete on a finish reason or on [DONE]; without either it was cut short", () => {
    expect(read(delta({ content: "a" }, "length")).outcome).toMatchObject({ ok: true, sawDone: false, answer: { finishReason: "length" } });
    expect(read(delta({ content: "a" }) + DONE).outcome).toMatchObject({ ok: true, sawDone: true, answer: { finishReason: "stop" } });
    expect(read(delta({ content: "a" }, "model_length") + DONE).outcome).toMatchObject({ ok: true, answer: { finishReason: "length" } });
    expect(read(delta({ content: "a" })).outcome).toMatchObject({
      ok: false,
      failure: { kind: "truncated" },
      partial: { message: { content: "a" } },
    });
    expect(read(DONE).outcome).toMatchObject({ ok: false, failure: { kind: "unusable" } });
    expect(read(data({ choices: [] }) + DONE).outcome).toMatchObject({ ok: false, failure: { kind: "unusable" } });
    expect(read(delta({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }, "tool_calls")).outcome).toMatchObject({
      ok: false,
      failure: { kind: "unusable", message: expect.stringContaining("without a name") },
    });
  });

  it("fails on an error however the upstream says it, even when [DONE] follows, and reads nothing after", () => {
    const cases = [
      [data({ error: { message: "boom", code: "server_error" } }), "boom"],
      [data({ object: "error", message: "flat boom", code: 500 }), "flat boom"],
      [data({ error: "bare boom" }), "bare boom"],
      ['event: error\ndata: {"message":"named boom"}\n\n', "named boom"],
      ['error: {"code":500,"message":"field boom"}\n\n', "field boom"],
      [delta({ content: "" }, "abort"), null],
      [delta({ content: "" }, "insufficient_system_resource"), null],
    ] as const;
    for (const [failure, message] of cases) {
      const { stream, events, outcome } = read(delta({ content: "so far" }) + failure + DONE);
      expect(events.map((e) => e.type)).toEqual(["chunk", "failed"]);
      expect(outcome, failure).toMatchObject({
        ok: false,
        failure: { kind: "error", upstreamMessage: message },
        partial: { message: { content: "so far" } },
      });
      expect(stream.push(encode(delta({ content: "more" }) + DONE))).toEqual([]);
    }
  });

  it("fails on data that is not a chunk: not JSON, not an object, choices not a list, a malformed delta, JSON nested too deep", () => {
    for (const bad of [
      "data: {not json\n\n",
      data(42),
      data({ choices: { index: 0 } }),
      delta({ content: 7 }),
      delta({ tool_calls: [{ index: -1, function: { name: "f" } }] }),
      delta({ tool_calls: [{ index: 0, function: { name: 3 } }] }),
      data(`{"choices":[{"index":0,"delta":{"content":"x"},"logprobs":${"[".repeat(5_000)}${"]".repeat(5_000)}}]}`),
    ]) {
      expect(read(delta({ content: "ok" }) + bad + DONE).outcome, bad.slice(0, 80)).toMatchObject({
        ok: false,
        failure: { kind: "unusable" },
        partial: { message: { content: "ok" } },
      });
    }
  });

  it("skips what is not for the answer: comments, other events, chunks that say nothing (Azure's prompt filter results)", () => {
    const { events, outcome } = read(
      ": keep-alive\n\nevent: ping\ndata: {}\n\n" +
        data({ choices: [], prompt_filter_results: [] }) +
        delta({ content: "a" }, "stop") +
        DONE,
    );
    expect(events.map((e: StreamEvent) => e.type)).toEqual(["chunk", "chunk", "done"]);
    expect(outcome).toMatchObject({ ok: true, answer: { message: { content: "a" } } });
  });

  it('joins logprobs across chunks, keys as sent: a supplier\'s "__proto__" is data, not a prototype', () => {
    const entry = (token: string) => ({ token, logprob: -0.5, bytes: [], top_logprobs: [] });
    const { outcome } = read(
      data({ choices: [{ index: 0, delta: { content: "a" }, logprobs: { content: [entry("a")], refusal: null } }] }) +
        data(
          '{"choices":[{"index":0,"delta":{"content":"b"},"logprobs":{"content":[ENTRY],"__proto__":{"polluted":true}}}]}'.replace(
            "ENTRY",
            JSON.stringify(entry("b")),
          ),
        ) +
        delta({}, "stop"),
    );
    const logprobs = (outcome as { answer: { logprobs: Record<string, unknown> } }).answer.logprobs;
    expect(logprobs.content).toEqual([entry("a"), entry("b")]);
    expect(Object.getPrototypeOf(logprobs)).toBe(Object.prototype);
    expect(Object.keys(logprobs)).toEqual(["content", "refusal", "__proto__"]);
    expect((logprobs as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it("gives what arrived so far at any point: the answer a cancelled stream is billed on", () => {
    const stream = new ChatStream();
    stream.push(encode(delta({ reasoning_content: "think" }) + delta({ content: "Hel" })));
    expect(stream.partial()).toMatchObject({ message: { content: "Hel", reasoning_content: "think" }, usage: null });
    stream.push(encode(delta({ content: "lo" })));
    expect(stream.partial().message.content).toBe("Hello");
    expect(stream.status).toBe("open");
  });
});

describe("a streamed answer is bounded like the JSON answer it becomes", () => {
  it("by default at DEFAULT_MAX_RESPONSE_BYTES of text, however many chunks it takes (tool-call arguments here)", () => {
    const stream = new ChatStream();
    const fragment = "x".repeat(60_000);
    let events: StreamEvent[] = stream.push(encode(delta({ tool_calls: [{ index: 0, id: "c", function: { name: "f", arguments: "" } }] })));
    let sent = 0;
    while (stream.status === "open") {
      events = stream.push(encode(delta({ tool_calls: [{ index: 0, function: { arguments: fragment } }] })));
      sent += fragment.length;
    }
    expect(events).toEqual([
      {
        type: "failed",
        failure: expect.objectContaining({ kind: "too_large", message: expect.stringContaining(String(DEFAULT_MAX_RESPONSE_BYTES)) }),
      },
    ]);
    expect(sent).toBeGreaterThan(DEFAULT_MAX_RESPONSE_BYTES - 60_000);
    expect(sent).toBeLessThanOrEqual(DEFAULT_MAX_RESPONSE_BYTES + 60_000);
    // What was accepted stays within the bound.
    expect(stream.partial().message.tool_calls![0].function.arguments.length).toBeLessThanOrEqual(DEFAULT_MAX_RESPONSE_BYTES);
  });

  it("counts every tool call's envelope: a flood of empty calls is bounded too", () => {
    const limit = TOOL_CALL_BYTES * 10;
    const calls = Array.from({ length: 11 }, (_, i) => delta({ tool_calls: [{ index: i }] })).join("");
    const { outcome } = read(calls, { maxAnswerBytes: limit });
    expect(outcome).toMatchObject({ ok: false, failure: { kind: "too_large" } });
    expect((outcome as { partial: { message: { tool_calls: unknown[] } } }).partial.message.tool_calls).toHaveLength(10);
  });

  it("refuses a line or an event over its limit as soon as it is seen, without waiting for its end", () => {
    const stream = new ChatStream({ maxLineBytes: 1_000, maxEventBytes: 4_000 });
    expect(stream.push(encode(`data: {"choices":[{"delta":{"content":"${"y".repeat(2_000)}`))).toEqual([
      { type: "failed", failure: expect.objectContaining({ kind: "too_large" }) },
    ]);
    const event = new ChatStream({ maxLineBytes: 1_000, maxEventBytes: 4_000 });
    expect(event.push(encode(`data: ${"z".repeat(900)}\n`.repeat(5)))).toEqual([
      { type: "failed", failure: expect.objectContaining({ kind: "too_large" }) },
    ]);
  });
});
