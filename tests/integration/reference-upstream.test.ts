import { connect } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countChatPromptTokens, countTextTokens } from "@/lib/upstream/tokens";
import { REFERENCE_MODELS } from "@/scripts/reference-upstream/catalog";
import { parseUpstreamMode, startReferenceUpstream, type ReferenceUpstream } from "@/scripts/reference-upstream/server";
import { AnswerGate } from "../helpers/answer-gate";

let upstream: ReferenceUpstream;
let client: OpenAI;

const MESSAGES = [
  { role: "system" as const, content: "You are terse." },
  { role: "user" as const, content: "What is the capital of France? Answer in one word, please." },
];

const WEATHER = {
  type: "object",
  properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } },
  required: ["city", "unit"],
  additionalProperties: false,
};
const TOOLS = [
  { type: "function" as const, function: { name: "get_weather", description: "Weather in a city", parameters: WEATHER } },
  { type: "function" as const, function: { name: "get_time", parameters: { type: "object", properties: {} } } },
];
const TOOL_TURN = {
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris","unit":"c"}' } }],
};

function ask(mode?: string, extra: { signal?: AbortSignal; max_tokens?: number } = {}) {
  return client.chat.completions.create(
    { model: "llama-3.3-70b", messages: MESSAGES, max_tokens: extra.max_tokens },
    { headers: mode ? { "X-Upstream-Mode": mode } : undefined, signal: extra.signal },
  );
}

function rawChat(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${upstream.url}/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${upstream.apiKey}`, "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function countDuring(fn: () => Promise<unknown>): Promise<number> {
  const before = upstream.requestCount();
  await fn().catch(() => undefined);
  return upstream.requestCount() - before;
}

beforeAll(async () => {
  upstream = await startReferenceUpstream();
  // Retries would hide how many times a request was really forwarded.
  client = new OpenAI({ baseURL: upstream.url, apiKey: upstream.apiKey, maxRetries: 0 });
});

afterAll(async () => {
  await upstream?.stop();
});

describe("reference upstream: happy path", () => {
  it("serves GET /health without auth", async () => {
    const res = await fetch(upstream.url.replace(/\/v1$/, "/health"));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-reference-upstream")).toBe("1");
    expect(await res.json()).toEqual({ ok: true });
  });

  it("answers deterministically with honest usage", async () => {
    const first = await ask();
    const second = await ask();
    const content = first.choices[0].message.content!;

    expect(content.startsWith("[reference upstream]")).toBe(true);
    expect(content).toContain("What is the capital of France?");
    expect(second.choices[0].message.content).toBe(content);
    expect(first.object).toBe("chat.completion");
    expect(first.model).toBe("llama-3.3-70b");
    expect(first.id).toMatch(/^chatcmpl-[0-9a-f]+$/);
    expect(first.choices[0].finish_reason).toBe("stop");
    expect(first.usage).toEqual({
      prompt_tokens: countChatPromptTokens(MESSAGES),
      completion_tokens: countTextTokens(content),
      total_tokens: countChatPromptTokens(MESSAGES) + countTextTokens(content),
    });
    expect(Number.isInteger(first.usage!.prompt_tokens)).toBe(true);
  });

  it("gives different answers to different prompts", async () => {
    const other = await client.chat.completions.create({
      model: "llama-3.3-70b",
      messages: [{ role: "user", content: "Something else entirely" }],
    });
    const same = await ask();
    expect(other.choices[0].message.content).not.toBe(same.choices[0].message.content);
  });

  it("truncates to max_tokens and reports finish_reason length", async () => {
    const completion = await ask(undefined, { max_tokens: 7 });
    const content = completion.choices[0].message.content!;
    expect(completion.choices[0].finish_reason).toBe("length");
    expect(completion.usage!.completion_tokens).toBe(7);
    expect(countTextTokens(content)).toBe(7);
    expect((await ask()).choices[0].message.content!.startsWith(content)).toBe(true);
  });

  it("honours max_completion_tokens too", async () => {
    const completion = await client.chat.completions.create({
      model: "qwen3-235b",
      messages: MESSAGES,
      max_completion_tokens: 3,
    });
    expect(completion.choices[0].finish_reason).toBe("length");
    expect(completion.usage!.completion_tokens).toBe(3);
  });

  it("counts special-token text in prompts as plain text", async () => {
    const messages = [{ role: "user" as const, content: "literal <|endoftext|> in the prompt" }];
    const completion = await client.chat.completions.create({ model: "venice-uncensored", messages });
    expect(completion.usage!.prompt_tokens).toBe(countChatPromptTokens(messages));
  });

  it("counts each chat completion request exactly once", async () => {
    expect(await countDuring(() => ask())).toBe(1);
    expect(await countDuring(() => ask("error:500"))).toBe(1);
  });
});

describe("reference upstream: models", () => {
  it("lists all four models with Venice-shaped pricing", async () => {
    const res = await fetch(`${upstream.url}/models`, { headers: { Authorization: `Bearer ${upstream.apiKey}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      object: string;
      data: Array<{ id: string; created: unknown; model_spec: Record<string, unknown> } & Record<string, unknown>>;
    };
    expect(body.object).toBe("list");
    expect(body.data.map((m) => m.id)).toEqual(["llama-3.3-70b", "qwen3-235b", "mistral-31-24b", "venice-uncensored"]);
    for (const model of REFERENCE_MODELS) {
      const entry = body.data.find((m) => m.id === model.id)!;
      expect(entry).toMatchObject({
        object: "model",
        owned_by: "svc-reference-upstream",
        type: "text",
        model_spec: {
          availableContextTokens: model.contextTokens,
          maxCompletionTokens: model.maxOutputTokens,
          pricing: {
            input: { usd: Number(model.inputUsdPerMTok), diem: Number(model.inputUsdPerMTok) },
            output: { usd: Number(model.outputUsdPerMTok), diem: Number(model.outputUsdPerMTok) },
          },
        },
      });
      expect(Number.isInteger(entry.created)).toBe(true);
    }
    expect(body.data[0].model_spec.pricing).toEqual({
      input: { usd: 0.7, diem: 0.7 },
      output: { usd: 2.8, diem: 2.8 },
    });
  });

  it("is reachable through the openai client", async () => {
    const page = await client.models.list();
    expect(page.data).toHaveLength(4);
    expect(page.data.every((m) => m.owned_by === "svc-reference-upstream")).toBe(true);
  });
});

describe("reference upstream: errors", () => {
  it("rejects a wrong API key with 401 invalid_api_key", async () => {
    const wrong = new OpenAI({ baseURL: upstream.url, apiKey: "wrong", maxRetries: 0 });
    const err = await wrong.chat.completions.create({ model: "llama-3.3-70b", messages: MESSAGES }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe("invalid_api_key");

    const models = await fetch(`${upstream.url}/models`);
    expect(models.status).toBe(401);
    expect(await models.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "invalid_api_key" },
    });
  });

  it("returns 404 model_not_found for an unknown model", async () => {
    const err = await client.chat.completions.create({ model: "gpt-9", messages: MESSAGES }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe("model_not_found");
  });

  it("returns 400 for malformed JSON, empty messages and non-string content", async () => {
    const cases: unknown[] = [
      "{not json",
      { model: "llama-3.3-70b", messages: [] },
      { model: "llama-3.3-70b", messages: [{ role: "user", content: 42 }] },
    ];
    for (const body of cases) {
      const res = await rawChat(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
    }
  });

  it("returns 404 JSON for unknown routes", async () => {
    const res = await fetch(`${upstream.url}/embeddings`, {
      method: "POST",
      headers: { Authorization: `Bearer ${upstream.apiKey}` },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toHaveProperty("error.message");
  });
});

describe("reference upstream: failure injection", () => {
  it("parses modes", () => {
    expect(parseUpstreamMode("ok")).toBe("ok");
    expect(parseUpstreamMode(" Latency:250 ")).toBe("latency:250");
    expect(parseUpstreamMode("error:503")).toBe("error:503");
    expect(parseUpstreamMode("flaky:3")).toBe("flaky:3");
    expect(parseUpstreamMode("flaky:0")).toBeNull();
    expect(parseUpstreamMode("error:200")).toBeNull();
    expect(parseUpstreamMode("latency:-1")).toBeNull();
    expect(parseUpstreamMode("sometimes")).toBeNull();
    expect(parseUpstreamMode("substitute:qwen3-235b")).toBe("substitute:qwen3-235b");
    expect(parseUpstreamMode("substitute:")).toBeNull();
    expect(parseUpstreamMode("substitute:a b")).toBeNull();
    expect(parseUpstreamMode("truncate")).toBe("truncate");
    expect(parseUpstreamMode("break-schema")).toBe("break-schema");
    expect(parseUpstreamMode("pad-reasoning")).toBe("pad-reasoning");
  });

  it("pad-reasoning claims hidden reasoning for all the room max_tokens leaves, only when reasoning is asked for", async () => {
    const headers = { "X-Upstream-Mode": "pad-reasoning" };
    const padded = await client.chat.completions.create(
      { model: "qwen3-235b", messages: MESSAGES, max_tokens: 500, reasoning_effort: "high" },
      { headers },
    );
    const visible = countTextTokens(padded.choices[0].message.content ?? "");
    expect(visible).toBeGreaterThan(10);
    expect(padded.usage).toMatchObject({ completion_tokens: 500, completion_tokens_details: { reasoning_tokens: 500 - visible } });
    // Without max_tokens: the model's cap; without reasoning asked for (or "none"): an honest claim.
    const capped = await client.chat.completions.create({ model: "qwen3-235b", messages: MESSAGES, reasoning_effort: "low" }, { headers });
    expect(capped.usage?.completion_tokens).toBe(REFERENCE_MODELS.find((m) => m.id === "qwen3-235b")!.maxOutputTokens);
    for (const effort of [undefined, "none" as const]) {
      const plain = await client.chat.completions.create(
        { model: "qwen3-235b", messages: MESSAGES, reasoning_effort: effort },
        { headers },
      );
      expect(plain.usage?.completion_tokens).toBe(visible);
      expect(plain.usage?.completion_tokens_details).toBeUndefined();
    }
  });

  it("substitute:<model> answers as that other model would, under its name", async () => {
    const honest = await ask();
    const substituted = await ask("substitute:qwen3-235b");
    expect(honest.model).toBe("llama-3.3-70b");
    expect(substituted.model).toBe("qwen3-235b");
    expect(substituted.choices[0].message.content).toContain("standing in for qwen3-235b");
    expect(substituted.choices[0].message.content).not.toBe(honest.choices[0].message.content);
    // The same reply the other model's own upstream gives to the same messages.
    const other = await client.chat.completions.create({ model: "qwen3-235b", messages: MESSAGES });
    expect(substituted.choices[0].message.content).toBe(other.choices[0].message.content);
  });

  it("truncate cuts every text answer to a few tokens with finish_reason length", async () => {
    const completion = await ask("truncate");
    expect(completion.choices[0].finish_reason).toBe("length");
    expect(countTextTokens(completion.choices[0].message.content ?? "")).toBeLessThanOrEqual(3);
    expect(completion.usage?.completion_tokens).toBeLessThanOrEqual(3);
  });

  it("break-schema answers structured outputs and tool calls with JSON that breaks the requested schema", async () => {
    const schema = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"], additionalProperties: false };
    const structured = await client.chat.completions.create(
      {
        model: "llama-3.3-70b",
        messages: MESSAGES,
        response_format: { type: "json_schema", json_schema: { name: "a", schema, strict: true } },
      },
      { headers: { "X-Upstream-Mode": "break-schema" } },
    );
    expect(JSON.parse(structured.choices[0].message.content ?? "null")).toEqual({ __broken__: "schema" });
    const called = await client.chat.completions.create(
      {
        model: "llama-3.3-70b",
        messages: MESSAGES,
        tools: [{ type: "function", function: { name: "lookup", parameters: schema } }],
        tool_choice: "required",
      },
      { headers: { "X-Upstream-Mode": "break-schema" } },
    );
    const call = called.choices[0].message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.name).toBe("lookup");
    expect(call?.type === "function" && JSON.parse(call.function.arguments)).toEqual({ __broken__: "schema" });
    // Without the mode the same requests satisfy the schema.
    const honest = await client.chat.completions.create({
      model: "llama-3.3-70b",
      messages: MESSAGES,
      response_format: { type: "json_schema", json_schema: { name: "a", schema, strict: true } },
    });
    expect(Number.isInteger(JSON.parse(honest.choices[0].message.content ?? "null").answer)).toBe(true);
  });

  it("rejects an unknown mode header with 400", async () => {
    const res = await rawChat({ model: "llama-3.3-70b", messages: MESSAGES }, { "X-Upstream-Mode": "sometimes" });
    expect(res.status).toBe(400);
  });

  it("latency:<ms> delays, then answers normally", async () => {
    const started = Date.now();
    const completion = await ask("latency:300");
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(completion.choices[0].message.content).toMatch(/^\[reference upstream\]/);
    expect(completion.usage).toBeDefined();
  });

  it("error:<status> answers that status with an OpenAI error body", async () => {
    for (const status of [429, 500, 503]) {
      const err = await ask(`error:${status}`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(status);
      expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "injected_error" });
    }
  });

  it("flaky:<n> fails every n-th request with HTTP 500 and answers the others", async () => {
    const flaky = await startReferenceUpstream({ defaultMode: "flaky:3", apiKey: "flaky-key" });
    try {
      const client = new OpenAI({ baseURL: flaky.url, apiKey: "flaky-key", maxRetries: 0 });
      const outcomes: (number | "ok")[] = [];
      for (let i = 0; i < 6; i++) {
        const answer = await client.chat.completions.create({ model: "llama-3.3-70b", messages: MESSAGES }).catch((e: unknown) => e);
        outcomes.push(answer instanceof OpenAI.APIError ? answer.status : "ok");
      }
      expect(outcomes).toEqual(["ok", "ok", 500, "ok", "ok", 500]);
    } finally {
      await flaky.stop();
    }
  });

  it("timeout never answers; the client gives up", async () => {
    const started = Date.now();
    const err = await ask("timeout", { signal: AbortSignal.timeout(300) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("garbage answers 200 with a non-JSON body", async () => {
    const res = await rawChat({ model: "llama-3.3-70b", messages: MESSAGES }, { "X-Upstream-Mode": "garbage" });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.length).toBeGreaterThan(0);
    expect(() => JSON.parse(text)).toThrow();
    await expect(ask("garbage")).rejects.toThrow();
  });

  it("no-usage answers normally without the usage field", async () => {
    const completion = await ask("no-usage");
    expect(completion.choices[0].message.content).toMatch(/^\[reference upstream\]/);
    expect(completion).not.toHaveProperty("usage");
  });

  it("bad-shape answers 200 JSON without choices", async () => {
    const completion = await ask("bad-shape");
    expect(completion).not.toHaveProperty("choices");
    expect(completion.object).toBe("chat.completion");
  });

  it("applies defaultMode when no header is sent, and a header overrides it", async () => {
    const failing = await startReferenceUpstream({ defaultMode: "error:502", apiKey: "other-key" });
    try {
      const other = new OpenAI({ baseURL: failing.url, apiKey: "other-key", maxRetries: 0 });
      const err = await other.chat.completions.create({ model: "llama-3.3-70b", messages: MESSAGES }).catch((e) => e);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      const ok = await other.chat.completions.create(
        { model: "llama-3.3-70b", messages: MESSAGES },
        { headers: { "X-Upstream-Mode": "ok" } },
      );
      expect(ok.choices[0].finish_reason).toBe("stop");
      expect(failing.requestCount()).toBe(2);
    } finally {
      await failing.stop();
    }
  });

  it("stop() promptly closes sockets held open by timeout mode", async () => {
    const holding = await startReferenceUpstream({ defaultMode: "timeout" });
    const other = new OpenAI({ baseURL: holding.url, apiKey: holding.apiKey, maxRetries: 0, timeout: 60_000 });
    const pending = other.chat.completions.create({ model: "llama-3.3-70b", messages: MESSAGES }).catch((e) => e);
    await waitFor(() => holding.requestCount() === 1);
    const started = Date.now();
    await holding.stop();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await pending).toBeInstanceOf(OpenAI.APIConnectionError);
  });
});

describe("reference upstream: a gate (tests/helpers/answer-gate.ts)", () => {
  it("holds each chat answer until the test releases it; other routes answer meanwhile", async () => {
    const gate = new AnswerGate();
    const gated = await startReferenceUpstream({ gate: gate.pass });
    try {
      const other = new OpenAI({ baseURL: gated.url, apiKey: gated.apiKey, maxRetries: 0 });
      let answered = 0;
      const chat = () => other.chat.completions.create({ model: "llama-3.3-70b", messages: MESSAGES }).finally(() => (answered += 1));
      const pending = Promise.all([chat(), chat()]);
      await gate.until(2);
      expect((await other.models.list()).data.length).toBeGreaterThan(0);
      expect(answered).toBe(0);

      gate.release();
      expect((await pending).map((c) => c.choices[0].finish_reason)).toEqual(["stop", "stop"]);
      expect(gate.parked).toBe(0);
    } finally {
      await gated.stop();
    }
  });

  it("in a burst, lets the answers go only once every request has come back refused or is parked", async () => {
    const gate = new AnswerGate();
    const gated = await startReferenceUpstream({ gate: gate.pass });
    try {
      const events: number[] = [];
      const send = (i: number) =>
        fetch(`${gated.url}/chat/completions`, {
          method: "POST",
          // Every other one with a wrong key: refused before the gate, as a request that cannot reserve never reaches it.
          headers: { authorization: `Bearer ${i % 2 ? "wrong" : gated.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "llama-3.3-70b", messages: MESSAGES }),
        }).then((res) => (events.push(res.status), res));
      const responses = await gate.burst(6, send);
      expect(responses.map((r) => r.status)).toEqual([200, 401, 200, 401, 200, 401]);
      expect(events).toEqual([401, 401, 401, 200, 200, 200]);
      // Closed again after the burst: the next request waits for the test.
      const next = send(0);
      await gate.until(1);
      gate.release();
      expect((await next).status).toBe(200);
    } finally {
      await gated.stop();
    }
  });
});

describe("reference upstream: new reply modes", () => {
  it("reasoning shows reasoning_content first and counts it in the usage, unless reasoning_effort is none", async () => {
    const headers = { "X-Upstream-Mode": "reasoning" };
    const reasoned = await client.chat.completions.create(
      { model: "qwen3-235b", messages: MESSAGES, reasoning_effort: "high" },
      { headers },
    );
    const message = reasoned.choices[0].message as { content: string; reasoning_content?: string };
    expect(message.reasoning_content).toMatch(/^Reasoning about "What is the capital of France\?/);
    expect(message.content).toBe(
      (await client.chat.completions.create({ model: "qwen3-235b", messages: MESSAGES })).choices[0].message.content,
    );
    const reasoningTokens = countTextTokens(message.reasoning_content!);
    expect(reasoned.usage).toMatchObject({
      completion_tokens: countTextTokens(message.content) + reasoningTokens,
      completion_tokens_details: { reasoning_tokens: reasoningTokens },
    });
    // max_tokens covers both: the reasoning first, the answer in what is left.
    const capped = await client.chat.completions.create(
      { model: "qwen3-235b", messages: MESSAGES, max_tokens: reasoningTokens + 4 },
      { headers },
    );
    expect(capped.choices[0].finish_reason).toBe("length");
    expect(countTextTokens(capped.choices[0].message.content!)).toBe(4);
    expect(capped.usage?.completion_tokens).toBe(reasoningTokens + 4);
    const none = await client.chat.completions.create({ model: "qwen3-235b", messages: MESSAGES, reasoning_effort: "none" }, { headers });
    expect(none.choices[0].message).not.toHaveProperty("reasoning_content");
    expect(none.usage?.completion_tokens_details).toBeUndefined();
  });

  it("parallel-tools calls every tool offered, each with its own id; a named tool_choice still calls one", async () => {
    const headers = { "X-Upstream-Mode": "parallel-tools" };
    const calls = (await client.chat.completions.create({ model: "llama-3.3-70b", messages: MESSAGES, tools: TOOLS }, { headers }))
      .choices[0];
    expect(calls.finish_reason).toBe("tool_calls");
    const toolCalls = calls.message.tool_calls!.map((c) =>
      c.type === "function" ? [c.id, c.function.name, JSON.parse(c.function.arguments)] : null,
    );
    expect(toolCalls).toEqual([
      [expect.stringMatching(/^call_[0-9a-f]{12}$/), "get_weather", { city: "city", unit: "c" }],
      [expect.stringMatching(/^call_[0-9a-f]{12}_1$/), "get_time", {}],
    ]);
    const named = await client.chat.completions.create(
      { model: "llama-3.3-70b", messages: MESSAGES, tools: TOOLS, tool_choice: { type: "function", function: { name: "get_time" } } },
      { headers },
    );
    expect(named.choices[0].message.tool_calls?.map((c) => c.type === "function" && c.function.name)).toEqual(["get_time"]);
  });

  it("long:<n> answers n tokens, or max_tokens with finish_reason length", async () => {
    const long = await ask("long:2000");
    expect(long.usage?.completion_tokens).toBe(2000);
    expect(countTextTokens(long.choices[0].message.content!)).toBe(2000);
    expect(long.choices[0].finish_reason).toBe("stop");
    const capped = await ask("long:2000", { max_tokens: 700 });
    expect(capped.usage?.completion_tokens).toBe(700);
    expect(capped.choices[0].finish_reason).toBe("length");
    expect(long.choices[0].message.content!.startsWith(capped.choices[0].message.content!)).toBe(true);
  });

  it("parses composed modes, one part per group, and refuses conflicts", () => {
    expect(parseUpstreamMode(" Reasoning + Die-After:3 ")).toBe("reasoning+die-after:3");
    expect(parseUpstreamMode("latency:200+error:503")).toBe("latency:200+error:503");
    expect(parseUpstreamMode("parallel-tools+pace:0+first-token:10+error-after:2+comments")).toBe(
      "parallel-tools+pace:0+first-token:10+error-after:2+comments",
    );
    for (const single of [
      "no-stream",
      "json-stream",
      "no-done",
      "long:5",
      "pace:5",
      "first-token:600000",
      "stall-after:0",
      "garbage-after:1",
    ]) {
      expect(parseUpstreamMode(single)).toBe(single);
    }
    for (const bad of [
      "truncate+inflate",
      "die-after:1+no-done",
      "error:500+timeout",
      "first-token:600001",
      "long:0",
      "die-after:",
      "ok+",
      "+ok",
      "pace:-1",
    ]) {
      expect(parseUpstreamMode(bad)).toBeNull();
    }
  });
});

describe("reference upstream: streaming", () => {
  it("streams, chunk by chunk, exactly the JSON answer: content, reasoning, tool calls, finish_reason and usage, mode by mode", async () => {
    const shapes: Record<string, unknown>[] = [
      { model: "llama-3.3-70b", messages: MESSAGES },
      { model: "llama-3.3-70b", messages: MESSAGES, max_tokens: 5 },
      { model: "qwen3-235b", messages: MESSAGES, reasoning_effort: "high", max_tokens: 40 },
      { model: "llama-3.3-70b", messages: [{ role: "user", content: 'Ünïcödé 🎉🇫🇷 and 中文 text, quoted "twice"\n\twith\r\nbreaks' }] },
      {
        model: "mistral-31-24b",
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "parts" },
              { type: "text", text: "joined" },
            ],
          },
        ],
      },
      { model: "llama-3.3-70b", messages: MESSAGES, tools: TOOLS },
      { model: "llama-3.3-70b", messages: MESSAGES, tools: TOOLS, tool_choice: { type: "function", function: { name: "get_time" } } },
      {
        model: "llama-3.3-70b",
        messages: [...MESSAGES, TOOL_TURN, { role: "tool", tool_call_id: "call_1", content: "Sunny, 21 C" }],
        tools: TOOLS,
      },
      { model: "llama-3.3-70b", messages: MESSAGES, response_format: { type: "json_object" } },
      { model: "llama-3.3-70b", messages: MESSAGES, response_format: { type: "json_schema", json_schema: { name: "w", schema: WEATHER } } },
    ];
    const modes = [
      "ok",
      "reasoning",
      "parallel-tools",
      "truncate",
      "break-schema",
      "inflate",
      "pad-reasoning",
      "substitute:qwen3-235b",
      "long:300",
    ];
    for (const mode of modes) {
      for (const shape of shapes) {
        const headers = { "X-Upstream-Mode": `${mode}+pace:0` };
        const json = (await (await rawChat(shape, headers)).json()) as ChatJson;
        const res = await rawChat({ ...shape, stream: true, stream_options: { include_usage: true } }, headers);
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
        const streamed = assemble((await readSse(res)).events);
        const where = `${mode} ${JSON.stringify(shape).slice(0, 80)}`;
        expect({ ...streamed.message, where }).toEqual({ ...json.choices[0].message, where });
        expect(streamed.finish).toBe(json.choices[0].finish_reason);
        expect(streamed.usage).toEqual(json.usage);
        expect(streamed.model).toBe(json.model);
        expect(streamed.ids.size).toBe(1);
        expect(streamed.done).toBe(true);
      }
    }
  });

  it("sends OpenAI's chunk sequence: a role delta, deltas of a few tokens, finish_reason, the usage chunk, [DONE]", async () => {
    const res = await rawChat({ model: "llama-3.3-70b", messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
    const { events, comments } = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    expect(comments).toEqual([]);
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as Chunk);
    expect(chunks[0]).toMatchObject({
      object: "chat.completion.chunk",
      model: "llama-3.3-70b",
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
      usage: null,
    });
    const content = chunks.slice(1, -2);
    expect(content.length).toBeGreaterThan(10);
    for (const chunk of content) {
      expect(chunk.usage).toBeNull();
      expect(countTextTokens(chunk.choices![0].delta.content!)).toBeGreaterThan(0);
      expect(countTextTokens(chunk.choices![0].delta.content!)).toBeLessThanOrEqual(6);
    }
    expect(chunks.at(-2)).toMatchObject({ choices: [{ delta: {}, finish_reason: "stop" }], usage: null });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: countChatPromptTokens(MESSAGES) } });

    // Without include_usage: no usage chunk and no usage field at all.
    const plain = (await readSse(await rawChat({ model: "llama-3.3-70b", messages: MESSAGES, stream: true }))).events;
    expect(plain.at(-1)).toBe("[DONE]");
    expect(plain.slice(0, -1).every((e) => !("usage" in JSON.parse(e)))).toBe(true);
    expect(JSON.parse(plain.at(-2)!).choices[0].finish_reason).toBe("stop");
  });

  it("streams parallel tool calls by index: a header delta with id, type and name, then argument fragments", async () => {
    const res = await rawChat(
      { model: "llama-3.3-70b", messages: MESSAGES, tools: TOOLS, stream: true },
      { "X-Upstream-Mode": "parallel-tools" },
    );
    const deltas = (await readSse(res)).events
      .slice(0, -1)
      .map((e) => (JSON.parse(e) as Chunk).choices![0].delta.tool_calls?.[0])
      .filter((d) => d !== undefined);
    expect(deltas[0]).toEqual({
      index: 0,
      id: expect.stringMatching(/^call_/),
      type: "function",
      function: { name: "get_weather", arguments: "" },
    });
    const second = deltas.findIndex((d) => d.index === 1);
    expect(second).toBeGreaterThan(2);
    expect(deltas[second]).toMatchObject({ index: 1, type: "function", function: { name: "get_time", arguments: "" } });
    expect(deltas.slice(1, second).every((d) => d.index === 0 && d.id === undefined && d.function!.arguments!.length > 0)).toBe(true);
  });

  it("is read by the openai SDK: create({ stream: true, stream_options: { include_usage: true } }) and the stream helper", async () => {
    const expected = await client.chat.completions.create({ model: "llama-3.3-70b", messages: MESSAGES });
    const stream = await client.chat.completions.create({
      model: "llama-3.3-70b",
      messages: MESSAGES,
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(content).toBe(expected.choices[0].message.content);
    expect(usage).toEqual(expected.usage);

    for (const mode of ["parallel-tools", "ok", "comments"]) {
      const body = { model: "llama-3.3-70b", messages: MESSAGES, tools: TOOLS };
      const json = await client.chat.completions.create(body, { headers: { "X-Upstream-Mode": mode } });
      const final = await client.chat.completions
        .stream({ ...body, stream_options: { include_usage: true } }, { headers: { "X-Upstream-Mode": mode } })
        .finalChatCompletion();
      expect(final.choices[0].message.tool_calls).toEqual(json.choices[0].message.tool_calls);
      expect(final.choices[0].finish_reason).toBe("tool_calls");
      expect(final.usage).toEqual(json.usage);
    }
  });

  it("paces the deltas (server-wide or per request): the first content arrives while the upstream is still sending", async () => {
    const paced = await startReferenceUpstream({ tokenDelayMs: 20 });
    try {
      const other = new OpenAI({ baseURL: paced.url, apiKey: paced.apiKey, maxRetries: 0 });
      const stream = await other.chat.completions.create({ model: "llama-3.3-70b", messages: MESSAGES, stream: true });
      let first: { end: string | null; chunks: number } | undefined;
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content && !first) first = { ...paced.streams().find((s) => s.id === chunk.id)! };
      }
      // When the first text arrived, the upstream had sent a few of the answer's ~18 deltas and was still going.
      expect(first).toMatchObject({ end: null, chunks: expect.any(Number) });
      expect(first!.chunks).toBeLessThan(5);
      expect(paced.streams()[0]).toMatchObject({ end: "completed" });
      expect(paced.streams()[0].chunks).toBeGreaterThan(10);
    } finally {
      await paced.stop();
    }
    // pace:<ms> per request: the answer's tokens take at least their time (a lower bound: timers never run early by much).
    const started = Date.now();
    const { events } = await readSse(
      await rawChat({ model: "llama-3.3-70b", messages: MESSAGES, stream: true }, { "X-Upstream-Mode": "pace:15" }),
    );
    const tokens = countTextTokens(assemble(events).message.content!);
    expect(Date.now() - started).toBeGreaterThanOrEqual(tokens * 15 * 0.8);
  });

  it("stops generating when the client hangs up, and counts it: what it had sent is in its record", async () => {
    const paced = await startReferenceUpstream({ tokenDelayMs: 20 });
    try {
      const other = new OpenAI({ baseURL: paced.url, apiKey: paced.apiKey, maxRetries: 0 });
      const full = await other.chat.completions.create({ model: "llama-3.3-70b", messages: MESSAGES });
      const stream = await other.chat.completions.create({ model: "llama-3.3-70b", messages: MESSAGES, stream: true });
      let received = "";
      let id = "";
      for await (const chunk of stream) {
        received += chunk.choices[0].delta.content ?? "";
        id = chunk.id;
        if (received.length > 0 && paced.streams()[0].chunks >= 3) break; // leaving the loop aborts the request
      }
      await waitFor(() => paced.cancelledCount() === 1);
      const record = paced.streams().find((s) => s.id === id)!;
      expect(record.end).toBe("cancelled");
      expect(record.chunks).toBeGreaterThanOrEqual(3);
      expect(record.completionTokens).toBeGreaterThanOrEqual(countTextTokens(received));
      expect(record.completionTokens).toBeLessThan(full.usage!.completion_tokens / 2);
      expect(paced.streamCount()).toBe(1);
    } finally {
      await paced.stop();
    }
  });

  it("holds a client that does not read at what its socket buffers, then finishes when it reads again", async () => {
    const big = await startReferenceUpstream({ models: [{ ...REFERENCE_MODELS[0], maxOutputTokens: 1_000_000 }], tokenDelayMs: 0 });
    const socket = connect(big.port, "127.0.0.1");
    try {
      socket.pause();
      const body = JSON.stringify({ model: "llama-3.3-70b", messages: MESSAGES, stream: true });
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: reference\r\nAuthorization: Bearer ${big.apiKey}\r\nContent-Type: application/json\r\n` +
          `X-Upstream-Mode: long:300000\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      // 300,000 tokens are ~84,000 deltas, ~22 MB: far more than a socket's buffers hold.
      await waitFor(() => big.streams()[0]?.waitingForClient === true, 20_000);
      const held = big.streams()[0].chunks;
      expect(held).toBeLessThan(84_000 / 2);
      let bytes = 0;
      socket.on("data", (data: Buffer) => (bytes += data.length));
      socket.resume();
      await waitFor(() => big.streams()[0].end !== null, 20_000);
      expect(big.streams()[0]).toMatchObject({ end: "completed", completionTokens: 300_000 });
      expect(big.streams()[0].chunks).toBeGreaterThan(2 * held);
      expect(bytes).toBeGreaterThan(20_000_000);
    } finally {
      socket.destroy();
      await big.stop();
    }
  });
});

describe("reference upstream: stream endings", () => {
  const STREAM = { model: "llama-3.3-70b", messages: MESSAGES, stream: true, stream_options: { include_usage: true } } as const;

  function streamIn(mode: string) {
    return client.chat.completions.create(STREAM, { headers: { "X-Upstream-Mode": mode } });
  }

  /** Reads an SDK stream until it ends or fails: the content deltas it got, the finish_reason, and the error. */
  async function drain(stream: AsyncIterable<OpenAI.ChatCompletionChunk>) {
    const out = { deltas: [] as string[], finish: null as string | null, id: "", error: null as unknown };
    try {
      for await (const chunk of stream) {
        out.id = chunk.id;
        if (chunk.choices[0]?.delta.content) out.deltas.push(chunk.choices[0].delta.content);
        out.finish ??= chunk.choices[0]?.finish_reason ?? null;
      }
    } catch (err) {
      out.error = err;
    }
    return out;
  }

  it("first-token:<ms> sends the headers at once, then nothing until the first token", async () => {
    const started = Date.now();
    const res = await rawChat(STREAM, { "X-Upstream-Mode": "first-token:2000" });
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_950);
    expect(new TextDecoder().decode(first.value)).toMatch(/^data: \{.*"role":"assistant"/);
    await reader.cancel();
  });

  it("die-after:<n> closes the connection mid-body after n deltas: no finish_reason, no usage, no [DONE]", async () => {
    const before = upstream.cancelledCount();
    const out = await drain(await streamIn("die-after:3"));
    expect(out.deltas).toHaveLength(3);
    expect(out.finish).toBeNull();
    expect(out.error).toBeInstanceOf(Error);
    const record = upstream.streams().find((s) => s.id === out.id)!;
    expect(record).toMatchObject({ end: "died", chunks: 3, completionTokens: countTextTokens(out.deltas.join("")) });
    expect(upstream.cancelledCount()).toBe(before);
    // die-after:0: the role delta, then the end; more deltas than the answer has: all of them, then the end.
    const nothing = await readSse(await rawChat(STREAM, { "X-Upstream-Mode": "die-after:0" }));
    expect(nothing.events).toHaveLength(1);
    expect(nothing.error).toBeDefined();
    const everything = await readSse(await rawChat(STREAM, { "X-Upstream-Mode": "die-after:100000" }));
    expect(assemble(everything.events).message.content).toBe((await ask()).choices[0].message.content);
    expect(assemble(everything.events).finish).toBeNull();
    expect(everything.error).toBeDefined();
  });

  it("error-after:<n> sends an in-band error event after n deltas, then ends: the SDK throws an APIError", async () => {
    const out = await drain(await streamIn("error-after:2"));
    expect(out.deltas).toHaveLength(2);
    expect(out.error).toBeInstanceOf(OpenAI.APIError);
    expect((out.error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "injected_error", type: "server_error" });
    const { events, error } = await readSse(await rawChat(STREAM, { "X-Upstream-Mode": "error-after:2" }));
    expect(error).toBeUndefined();
    expect(JSON.parse(events.at(-1)!)).toEqual({ error: expect.objectContaining({ code: "injected_error", message: expect.any(String) }) });
    expect(upstream.streams().at(-1)).toMatchObject({ end: "errored", chunks: 2 });
  });

  it("finish-error-after:<n> sends OpenRouter's error chunk (finish_reason error) after n deltas, then ends", async () => {
    const { events } = await readSse(await rawChat(STREAM, { "X-Upstream-Mode": "finish-error-after:4" }));
    const last = JSON.parse(events.at(-1)!) as Chunk & { error: unknown };
    expect(last.error).toMatchObject({ code: "server_error" });
    expect(last.choices).toEqual([{ index: 0, delta: { content: "" }, finish_reason: "error" }]);
    expect(events.filter((e) => e.includes('"content":"') && !e.includes('"content":""'))).toHaveLength(4);
    expect(events).not.toContain("[DONE]");
  });

  it("garbage-after:<n> sends a data line that is not JSON after n deltas, then ends; the SDK fails", async () => {
    const { events } = await readSse(await rawChat(STREAM, { "X-Upstream-Mode": "garbage-after:1" }));
    expect(events).toHaveLength(3);
    expect(() => JSON.parse(events[2])).toThrow();
    const out = await drain(await streamIn("garbage-after:1"));
    expect(out.deltas).toHaveLength(1);
    expect(out.error).toBeDefined();
  });

  it("stall-after:<n> goes silent after n deltas until the client hangs up", async () => {
    const before = upstream.cancelledCount();
    const abort = new AbortController();
    const res = await fetch(`${upstream.url}/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${upstream.apiKey}`, "Content-Type": "application/json", "X-Upstream-Mode": "stall-after:2" },
      body: JSON.stringify(STREAM),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/"content":"[^"]/g) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
    const record = upstream.streams().at(-1)!;
    expect(record).toMatchObject({ end: null, chunks: 2 });
    abort.abort();
    await waitFor(() => upstream.cancelledCount() === before + 1);
    expect(record).toMatchObject({ end: "cancelled", chunks: 2 });
  });

  it("no-done ends after the usage chunk without [DONE]", async () => {
    const { events, error } = await readSse(await rawChat(STREAM, { "X-Upstream-Mode": "no-done" }));
    expect(error).toBeUndefined();
    expect(events).not.toContain("[DONE]");
    const streamed = assemble(events);
    expect(streamed.finish).toBe("stop");
    expect(streamed.usage).toEqual((await ask()).usage);
  });

  it("no-stream refuses stream: true with a 400 as a server that cannot stream does, and answers without it", async () => {
    const res = await rawChat(STREAM, { "X-Upstream-Mode": "no-stream" });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", code: "stream_not_supported" } });
    expect((await ask("no-stream")).choices[0].finish_reason).toBe("stop");
  });

  it("json-stream answers a stream request with the plain JSON completion", async () => {
    const res = await rawChat(STREAM, { "X-Upstream-Mode": "json-stream" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as ChatJson & { object: string };
    expect(body.object).toBe("chat.completion");
    const expected = await ask();
    expect(body.choices[0].message).toEqual(expected.choices[0].message);
    expect(body.usage).toEqual(expected.usage);
  });

  it("no-usage and bad-shape stream as they answer: no usage chunk; chunks without choices", async () => {
    const noUsage = await readSse(await rawChat(STREAM, { "X-Upstream-Mode": "no-usage" }));
    expect(assemble(noUsage.events)).toMatchObject({ usage: undefined, finish: "stop", done: true });
    expect(noUsage.events.slice(0, -1).every((e) => !("usage" in JSON.parse(e)))).toBe(true);
    const badShape = await readSse(await rawChat(STREAM, { "X-Upstream-Mode": "bad-shape" }));
    const chunks = badShape.events.slice(0, -1).map((e) => JSON.parse(e) as Chunk);
    expect(chunks.every((c) => !("choices" in c))).toBe(true);
    expect(chunks.at(-1)!.usage).toEqual((await ask()).usage);
  });

  it("comments puts an SSE comment line before every event; the content is the same", async () => {
    const { events, comments } = await readSse(await rawChat(STREAM, { "X-Upstream-Mode": "comments" }));
    expect(comments.length).toBe(events.length);
    expect(assemble(events).message.content).toBe((await ask()).choices[0].message.content);
  });

  it("refuses a bad stream request before the first byte, with the usual JSON error", async () => {
    const cases: [Record<string, unknown>, Record<string, string>, number, string][] = [
      [{ ...STREAM, stream_options: "yes" }, {}, 400, "invalid_request"],
      [{ ...STREAM, model: "gpt-9" }, {}, 404, "model_not_found"],
      [{ ...STREAM, model: "venice-uncensored", tools: TOOLS }, {}, 400, "unsupported_feature"],
      [STREAM, { Authorization: "Bearer wrong" }, 401, "invalid_api_key"],
      [STREAM, { "X-Upstream-Mode": "die-after:x" }, 400, "invalid_upstream_mode"],
      [STREAM, { "X-Upstream-Mode": "error:503+first-token:10" }, 503, "injected_error"],
    ];
    const before = upstream.streamCount();
    for (const [body, headers, status, code] of cases) {
      const res = await rawChat(body, headers);
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    }
    expect(upstream.streamCount()).toBe(before);
    // stream_options on a request that does not stream is ignored, as before.
    expect((await rawChat({ model: "llama-3.3-70b", messages: MESSAGES, stream_options: "yes" })).status).toBe(200);
  });

  it("stop() ends live streams promptly; they count as stopped, not cancelled", async () => {
    const holding = await startReferenceUpstream({ defaultMode: "stall-after:1" });
    const other = new OpenAI({ baseURL: holding.url, apiKey: holding.apiKey, maxRetries: 0 });
    const pending = Promise.all([1, 2].map(async () => drain(await other.chat.completions.create(STREAM))));
    await waitFor(() => holding.streams().filter((s) => s.chunks === 1).length === 2);
    const started = Date.now();
    await holding.stop();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await pending).every((out) => out.error !== null && out.deltas.length === 1)).toBe(true);
    await waitFor(() => holding.streams().every((s) => s.end === "stopped"));
    expect(holding.cancelledCount()).toBe(0);
  });
});

type ToolCallJson = { id: string; type: "function"; function: { name: string; arguments: string } };
type MessageJson = { role: string; content: string | null; reasoning_content?: string; tool_calls?: ToolCallJson[] };
type ChatJson = { model: string; choices: { message: MessageJson; finish_reason: string }[]; usage?: Record<string, unknown> };
type Chunk = {
  id: string;
  model: string;
  choices?: {
    delta: {
      role?: string;
      content?: string | null;
      reasoning_content?: string;
      tool_calls?: { index: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason: string | null;
  }[];
  usage?: Record<string, unknown> | null;
};

/** The data of each event (comments apart), read as they come; a stream cut mid-body keeps what arrived, and the error. */
async function readSse(res: Response): Promise<{ events: string[]; comments: string[]; error?: unknown }> {
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  let text = "";
  let error: unknown;
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) text += decoder.decode(read.value, { stream: true });
  } catch (err) {
    error = err;
  }
  const blocks = text.split("\n\n").filter((b) => b !== "");
  const events = blocks.flatMap((b) =>
    b
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => l.slice("data: ".length)),
  );
  const comments = blocks.flatMap((b) => b.split("\n").filter((l) => l.startsWith(":")));
  return { events, comments, error };
}

/** Puts the deltas together as a client does. */
function assemble(events: string[]) {
  const message: MessageJson = { role: "", content: null };
  let finish: string | null = null;
  let usage: Record<string, unknown> | undefined;
  const ids = new Set<string>();
  let model = "";
  for (const event of events.filter((e) => e !== "[DONE]")) {
    const chunk = JSON.parse(event) as Chunk;
    ids.add(chunk.id);
    model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const { delta } = choice;
    if (delta.role) message.role = delta.role;
    if (delta.content !== undefined && delta.content !== null) message.content = (message.content ?? "") + delta.content;
    if (delta.reasoning_content !== undefined) message.reasoning_content = (message.reasoning_content ?? "") + delta.reasoning_content;
    for (const call of delta.tool_calls ?? []) {
      message.tool_calls ??= [];
      const existing = message.tool_calls[call.index];
      if (!existing)
        message.tool_calls[call.index] = { id: call.id!, type: "function", function: { name: call.function!.name!, arguments: "" } };
      message.tool_calls[call.index].function.arguments += call.function?.arguments ?? "";
    }
    finish ??= choice.finish_reason;
  }
  return { message, finish, usage, ids, model, done: events.at(-1) === "[DONE]" };
}

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("waitFor timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
