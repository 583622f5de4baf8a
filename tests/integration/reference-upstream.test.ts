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

  it("returns 400 for malformed JSON, empty messages, non-string content and stream", async () => {
    const cases: unknown[] = [
      "{not json",
      { model: "llama-3.3-70b", messages: [] },
      { model: "llama-3.3-70b", messages: [{ role: "user", content: 42 }] },
      { model: "llama-3.3-70b", messages: MESSAGES, stream: true },
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

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("waitFor timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
