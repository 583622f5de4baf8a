/**
 * POST /v2/chat/completions and /v2/responses with stream: true, against the app over real HTTP (the front door in
 * front of the route handlers), routed to the reference upstream. What a streaming buyer relies on: the answer as it is
 * generated, one clear however the stream ends, and that clear's cost in the usage.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from "@openai/agents";
import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import { streamText } from "ai";
import { request, type IncomingMessage } from "node:http";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { formatMicros, parseMicros } from "@/lib/money";
import { takeStreamSlot } from "@/lib/router/stream-slots";
import { REFERENCE_MODELS } from "../../scripts/reference-upstream/catalog";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { startAppProcess } from "../helpers/app-process";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { buyerBalance, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;

let upstream: ReferenceUpstream;
let app: RouteServer;
/** Upstreams that end their streams in one way each (the reference upstream's modes). */
const ways: Record<string, ReferenceUpstream> = {};
const WAYS = {
  paced: "long:300+pace:15",
  dies: "long:200+die-after:8",
  fails: "error:500",
  refuses: "no-stream",
  json: "json-stream",
  slowFirst: "first-token:12000",
} as const;

beforeAll(async () => {
  setTracingDisabled(true);
  [upstream, app] = await Promise.all([startReferenceUpstream(), startRouteServer()]);
  for (const [name, defaultMode] of Object.entries(WAYS)) ways[name] = await startReferenceUpstream({ defaultMode });
});

afterAll(async () => {
  await Promise.all([upstream.stop(), app.stop(), ...Object.values(ways).map((u) => u.stop())]);
});

async function market(via: ReferenceUpstream = upstream) {
  const model = await seedPrivateModel({ supportsTools: true, supportsJsonSchema: true, supportsVision: true });
  const offer = await seedOffer({
    models: [{ id: model.id, upstreamModel: "mistral-31-24b" }],
    priceCents: 90,
    dailyCapacityMicroDiem: 100_000_000n,
    upstreamBaseUrl: via.url,
    upstreamApiKey: via.apiKey,
    features: { tools: true, json_schema: true, vision: true },
  });
  const buyer = await seedBuyer(5n * ONE_USDC);
  return { model, offer, buyer };
}

const client = (key: string) => new OpenAI({ baseURL: `${app.url}/v2`, apiKey: key, maxRetries: 0 });

describe("the openai SDK's chat stream", () => {
  it("streams the text and ends with the usage, its cost and the balance after the clear", async () => {
    const { model, buyer } = await market();
    const before = await buyerBalance(buyer.id);
    const stream = await client(buyer.key).chat.completions.create({
      model: model.id,
      messages: [{ role: "user", content: "Hello there" }],
      max_tokens: 60,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: (OpenAI.CompletionUsage & { cost?: number; cost_details?: { charge: string }; balance_remaining?: string }) | null = null;
    let id = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      id = chunk.id;
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe("stop");
    expect(usage).not.toBeNull();
    const clear = await db.clear.findUniqueOrThrow({ where: { completionId: id } });
    expect(usage!.cost_details!.charge).toBe(formatMicros(clear.chargeMicros));
    const after = await buyerBalance(buyer.id);
    expect(before.balance - after.balance).toBe(clear.chargeMicros);
    expect(usage!.balance_remaining).toBe(formatMicros(after.balance));
    expect(after.held).toBe(0n);
    expect(await db.completion.findUniqueOrThrow({ where: { id } })).toMatchObject({ endReason: "completed", streamed: true });
  });
});

const hello = [{ role: "user" as const, content: "Hello there" }];

/** POST /v2/chat/completions with stream: true, read by hand: the response, and a reader of its events. */
async function rawStream(key: string, body: Record<string, unknown>, signal?: AbortSignal) {
  const res = await fetch(`${app.url}/v2/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ stream: true, ...body }),
    signal,
  });
  return res;
}

/** Waits for the clear of a generation (a stream clears after its last byte) and returns it, or null when none came. */
async function clearOf(completionId: string, ms = 5_000) {
  const until = Date.now() + ms;
  for (;;) {
    const clear = await db.clear.findUnique({ where: { completionId } });
    if (clear || Date.now() > until) return clear;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the buyer holds nothing (the stream's hold cleared or released). */
async function settled(buyerId: string, ms = 5_000) {
  const until = Date.now() + ms;
  for (;;) {
    const b = await buyerBalance(buyerId);
    if (b.held === 0n || Date.now() > until) return b;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the clients people stream with, against /v2", () => {
  it("the openai SDK assembles a streamed tool call to the call the upstream makes", async () => {
    const { model, buyer } = await market();
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: "function",
        function: {
          name: "get_weather",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
        },
      },
    ];
    const request = { model: model.id, messages: [{ role: "user" as const, content: "Weather in Paris?" }], tools, max_tokens: 80 };
    const whole = await client(buyer.key).chat.completions.create(request);
    const stream = client(buyer.key).chat.completions.stream({ ...request, stream: true });
    const final = await stream.finalChatCompletion();
    const streamed = final.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    const expected = whole.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(streamed.function.name).toBe("get_weather");
    expect(JSON.parse(streamed.function.arguments)).toEqual(JSON.parse(expected.function.arguments));
    expect(final.choices[0].finish_reason).toBe("tool_calls");
  });

  it("the openai SDK's responses.stream() gets OpenAI's event sequence and the final response with its cost", async () => {
    const { model, buyer } = await market();
    const stream = client(buyer.key).responses.stream({ model: model.id, input: "Hello there", max_output_tokens: 60 });
    const types: string[] = [];
    const sequence: number[] = [];
    let text = "";
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    const final = await stream.finalResponse();
    expect(types[0]).toBe("response.created");
    expect(types[1]).toBe("response.in_progress");
    expect(types.indexOf("response.output_item.added")).toBeLessThan(types.indexOf("response.output_text.delta"));
    expect(types.at(-1)).toBe("response.completed");
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(final.output_text).toBe(text);
    const usage = final.usage as OpenAI.Responses.ResponseUsage & { cost_details: { charge: string } };
    const clear = await clearOf(`chatcmpl-${final.id.slice("resp_".length)}`);
    expect(usage.cost_details.charge).toBe(formatMicros(clear!.chargeMicros));
  });

  it("the AI SDK's streamText: the openai-compatible provider, and the openai provider's chat and responses models", async () => {
    const { model, buyer } = await market();
    const compatible = createOpenAICompatible({ name: "svc", baseURL: `${app.url}/v2`, apiKey: buyer.key, includeUsage: true });
    const openai = createOpenAI({ baseURL: `${app.url}/v2`, apiKey: buyer.key });
    for (const languageModel of [compatible(model.id), openai.chat(model.id), openai.responses(model.id)]) {
      const result = streamText({ model: languageModel, prompt: "Hello there", maxOutputTokens: 60, maxRetries: 0 });
      let text = "";
      for await (const part of result.textStream) text += part;
      expect(text.length).toBeGreaterThan(0);
      expect(await result.text).toBe(text);
      expect((await result.usage).outputTokens).toBeGreaterThan(0);
    }
  });

  it("the OpenRouter AI SDK provider streams, with svc's usage", async () => {
    const { model, buyer } = await market();
    const openrouter = createOpenRouter({ baseURL: `${app.url}/v2`, apiKey: buyer.key });
    const result = streamText({ model: openrouter.chat(model.id), prompt: "Hello there", maxOutputTokens: 60, maxRetries: 0 });
    let text = "";
    for await (const part of result.textStream) text += part;
    expect(text.length).toBeGreaterThan(0);
    expect((await result.usage).inputTokens).toBeGreaterThan(0);
  });

  it("LangChain's .stream() and the Agents SDK's streamed run", async () => {
    const { model, buyer } = await market();
    const chat = new ChatOpenAI({
      model: model.id,
      apiKey: buyer.key,
      configuration: { baseURL: `${app.url}/v2` },
      maxTokens: 60,
      maxRetries: 0,
    });
    let text = "";
    let chunks = 0;
    for await (const chunk of await chat.stream("Hello there")) {
      text += typeof chunk.content === "string" ? chunk.content : "";
      chunks++;
    }
    expect(chunks).toBeGreaterThan(1);
    expect(text.length).toBeGreaterThan(0);

    const provider = new OpenAIProvider({ apiKey: buyer.key, baseURL: `${app.url}/v2`, useResponses: true });
    const agent = new Agent({ name: "greeter", instructions: "Be brief.", model: model.id, modelSettings: { maxTokens: 60 } });
    const result = await new Runner({ modelProvider: provider }).run(agent, "Hello there", { stream: true });
    let streamedText = "";
    for await (const delta of result.toTextStream()) streamedText += delta;
    await result.completed;
    expect(result.finalOutput).toBe(streamedText);
    expect(streamedText.length).toBeGreaterThan(0);
  });

  it("sends the first content while the upstream is still generating (not buffered)", async () => {
    const { model, buyer } = await market(ways.paced);
    const started = performance.now();
    const stream = await client(buyer.key).chat.completions.create({ model: model.id, messages: hello, max_tokens: 300, stream: true });
    let first = 0;
    for await (const chunk of stream) if (!first && chunk.choices[0]?.delta.content) first = performance.now() - started;
    const total = performance.now() - started;
    // 300 tokens at 15 ms: the upstream takes ~4.5 s; the first content must come long before the end.
    expect(total).toBeGreaterThan(3_000);
    expect(first).toBeLessThan(total / 3);
  });
});

describe("a long stream's hold", () => {
  it("is kept from the sweeper past a completion's deadline, and cleared when the stream ends", async () => {
    const { model, buyer } = await market(ways.paced);
    const res = await rawStream(buyer.key, { model: model.id, messages: hello, max_tokens: 300 });
    const id = res.headers.get("x-svc-generation-id")!;
    const body = res.text();
    // Half of UPSTREAM_TIMEOUT_MS (6 s in tests) in, the hold is extended to the stream's longest life.
    await expect
      .poll(async () => (await db.hold.findFirst({ where: { accountId: buyer.id, status: "active" } }))?.expiresAt.getTime() ?? 0, {
        timeout: 6_000,
      })
      .toBeGreaterThan(Date.now() + 10 * 60_000);
    expect(await body).toContain("data: [DONE]");
    expect(await clearOf(id)).not.toBeNull();
    expect((await settled(buyer.id)).held).toBe(0n);
  });
});

describe("what each ending costs, cleared once", () => {
  it("a client that hangs up after a few chunks pays the prompt and what had arrived, and the upstream is stopped", async () => {
    const { model, buyer } = await market(ways.paced);
    const whole = await client(buyer.key).chat.completions.create({ model: model.id, messages: hello, max_tokens: 300 });
    const wholeCharge = (await clearOf(whole.id))!.chargeMicros;
    const before = await buyerBalance(buyer.id);
    const cancelled = ways.paced.cancelledCount();

    const abort = new AbortController();
    const res = await rawStream(buyer.key, { model: model.id, messages: hello, max_tokens: 300 }, abort.signal);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const id = res.headers.get("x-svc-generation-id")!;
    const reader = res.body!.getReader();
    let contentEvents = 0;
    const decoder = new TextDecoder();
    while (contentEvents < 5) {
      const { value } = await reader.read();
      contentEvents += (decoder.decode(value).match(/"content":"[^"]/g) ?? []).length;
    }
    abort.abort();

    const clear = await clearOf(id);
    expect(clear).not.toBeNull();
    expect(clear!.chargeMicros).toBeGreaterThan(0n);
    expect(clear!.chargeMicros).toBeLessThan(wholeCharge);
    const after = await settled(buyer.id);
    expect(after.held).toBe(0n);
    expect(before.balance - after.balance).toBe(clear!.chargeMicros);
    const record = await (await fetch(`${app.url}/v2/generations/${id}`, { headers: { authorization: `Bearer ${buyer.key}` } })).json();
    expect(record.usage.cost_details.charge).toBe(formatMicros(clear!.chargeMicros));
    expect(record).toMatchObject({ end: "client_cancelled", streamed: true });
    await expect.poll(() => ways.paced.cancelledCount()).toBeGreaterThan(cancelled);
  });

  it(
    "a client that stops reading: its stream ends after STREAM_STALL_MS as client_cancelled, billed for what had arrived, the upstream stopped",
    { timeout: 60_000 },
    async () => {
      // An answer far larger than what the sockets' kernel buffers absorb (~4 MiB each way on loopback), sent at once.
      const longOutput = { ...REFERENCE_MODELS[0], id: "long-output", contextTokens: 700_000, maxOutputTokens: 600_000 };
      const fast = await startReferenceUpstream({ defaultMode: "long:600000+pace:0", models: [longOutput] });
      try {
        const model = await seedPrivateModel({ maxOutputTokens: 600_000, contextTokens: 700_000 });
        await seedOffer({
          models: [{ id: model.id, upstreamModel: longOutput.id }],
          priceCents: 90,
          dailyCapacityMicroDiem: 100_000_000n,
          upstreamBaseUrl: fast.url,
          upstreamApiKey: fast.apiKey,
        });
        const buyer = await seedBuyer(5n * ONE_USDC);
        const before = await buyerBalance(buyer.id);
        const cancelled = fast.cancelledCount();

        // node:http's client stops reading its socket when paused: the reader a stalled agent or a frozen tab is.
        const body = JSON.stringify({ model: model.id, messages: hello, max_tokens: 600_000, stream: true });
        const { id, res } = await new Promise<{ id: string; res: IncomingMessage }>((resolve, reject) => {
          const req = request(
            `${app.url}/v2/chat/completions`,
            { method: "POST", headers: { authorization: `Bearer ${buyer.key}`, "content-type": "application/json" } },
            (res) => {
              expect(res.statusCode).toBe(200);
              res.once("data", () => res.pause());
              resolve({ id: res.headers["x-svc-generation-id"] as string, res });
            },
          );
          req.on("error", reject);
          req.end(body);
        });

        // svc gives up on the reader once it has read nothing for STREAM_STALL_MS (3 s in the tests), not before.
        const clear = await clearOf(id, 30_000);
        expect(clear).not.toBeNull();
        const record = await (await fetch(`${app.url}/v2/generations/${id}`, { headers: { authorization: `Bearer ${buyer.key}` } })).json();
        expect(record).toMatchObject({ end: "client_cancelled", streamed: true });
        // What had arrived from the upstream when the reader stalled: more than nothing, bounded by the buffers, far
        // from the whole answer (the upstream was stopped, not read to the end for nobody).
        expect(record.usage.completion_tokens).toBeGreaterThan(0);
        expect(record.usage.completion_tokens).toBeLessThan(600_000 / 2);
        await expect.poll(() => fast.cancelledCount()).toBeGreaterThan(cancelled);
        const after = await settled(buyer.id);
        expect(after.held).toBe(0n);
        expect(before.balance - after.balance).toBe(clear!.chargeMicros);
        // svc closed the connection rather than keep a socket and its buffers for a reader that may never come back:
        // reading again, the client gets what the kernel held, then the end of an incomplete body (never a [DONE]).
        let tail = "";
        res.setEncoding("utf8");
        res.on("data", (text: string) => (tail = (tail + text).slice(-200)));
        const closed = new Promise<void>((resolve) => res.on("close", resolve));
        res.on("error", () => undefined); // "aborted": the body ended before its end
        res.resume();
        await closed;
        expect(res.complete).toBe(false);
        expect(tail).not.toContain("[DONE]");
      } finally {
        await fast.stop();
      }
    },
  );

  it("an upstream that dies mid-stream: an error event, what arrived billed by svc's count, a failure in the offer's health", async () => {
    const { model, offer, buyer } = await market(ways.dies);
    const before = await buyerBalance(buyer.id);
    const stream = await client(buyer.key).chat.completions.create({
      model: model.id,
      messages: hello,
      max_tokens: 200,
      stream: true,
      stream_options: { include_usage: true },
    });
    let id = "";
    let text = "";
    type Cost = { cost_details?: { charge: string; usage_estimated: boolean } };
    let usage: Cost | null = null;
    const failed = await (async () => {
      try {
        for await (const chunk of stream) {
          id = chunk.id;
          text += chunk.choices[0]?.delta.content ?? "";
          if (chunk.usage) usage = chunk.usage as unknown as Cost;
        }
        return null;
      } catch (error) {
        return error;
      }
    })();
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect(text.length).toBeGreaterThan(0);
    const clear = await clearOf(id);
    expect(clear!.chargeMicros).toBeGreaterThan(0n);
    expect(usage!.cost_details!.charge).toBe(formatMicros(clear!.chargeMicros));
    expect(usage!.cost_details!.usage_estimated).toBe(true);
    const after = await settled(buyer.id);
    expect(before.balance - after.balance).toBe(clear!.chargeMicros);
    const row = await db.offer.findUniqueOrThrow({ where: { id: offer.id } });
    expect(row.lastFailureReason).toMatch(/stream|network|connection/i);
    expect(await db.completion.findUniqueOrThrow({ where: { id } })).toMatchObject({ endReason: "upstream_error", streamed: true });
  });

  it("an upstream that fails before any content: an error event, nothing billed, the hold released", async () => {
    const { model, buyer } = await market(ways.fails);
    const before = await buyerBalance(buyer.id);
    const res = await rawStream(buyer.key, { model: model.id, messages: hello, max_tokens: 50 });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toMatch(/data: \{"error":\{/);
    expect(body).not.toContain("[DONE]");
    expect(await clearOf(res.headers.get("x-svc-generation-id")!, 500)).toBeNull();
    const after = await settled(buyer.id);
    expect(after).toEqual(before);
  });

  it("an upstream that cannot stream (refuses stream: true, or answers JSON) still serves a valid stream", async () => {
    for (const way of [ways.refuses, ways.json]) {
      const { model, buyer } = await market(way);
      const before = await buyerBalance(buyer.id);
      const stream = client(buyer.key).chat.completions.stream({
        model: model.id,
        messages: hello,
        max_tokens: 50,
        stream: true,
        stream_options: { include_usage: true },
      });
      const final = await stream.finalChatCompletion();
      expect(final.choices[0].message.content!.length).toBeGreaterThan(0);
      const clear = await clearOf(final.id);
      const after = await settled(buyer.id);
      expect(before.balance - after.balance).toBe(clear!.chargeMicros);
      expect(final.usage!.prompt_tokens).toBeGreaterThan(0);
    }
  });

  it("a 12-second first token: bytes reach the client within 5 s, and the answer completes", { timeout: 40_000 }, async () => {
    const { model, buyer } = await market(ways.slowFirst);
    const started = performance.now();
    const res = await rawStream(buyer.key, { model: model.id, messages: hello, max_tokens: 20 });
    const reader = res.body!.getReader();
    const first = await reader.read();
    const firstBytesMs = performance.now() - started;
    expect(firstBytesMs).toBeLessThan(5_000);
    expect(new TextDecoder().decode(first.value)).toMatch(/^: /);
    let rest = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(performance.now() - started).toBeGreaterThan(11_000);
    expect(rest).toContain("data: [DONE]");
  });

  it("100 concurrent streams: their usage costs sum to the balance's fall, to the micro-USDC", { timeout: 120_000 }, async () => {
    const { model, buyer } = await market();
    const before = await buyerBalance(buyer.id);
    const charges = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const stream = await client(buyer.key).chat.completions.create({
          model: model.id,
          messages: [{ role: "user", content: `Hello number ${i}` }],
          max_tokens: 30,
          stream: true,
          stream_options: { include_usage: true },
        });
        let charge = "";
        for await (const chunk of stream) {
          const usage = chunk.usage as { cost_details?: { charge: string } } | undefined;
          if (usage?.cost_details) charge = usage.cost_details.charge;
        }
        return parseMicros(charge)!;
      }),
    );
    const after = await settled(buyer.id);
    expect(charges.every((c) => c > 0n)).toBe(true);
    expect(before.balance - after.balance).toBe(charges.reduce((a, b) => a + b, 0n));
  });
});

describe("what an offer declares about streaming", () => {
  it("an offer whose upstream does not stream is asked without streaming, and the buyer still gets a stream", async () => {
    const { model, offer, buyer } = await market();
    await db.offer.update({ where: { id: offer.id }, data: { streams: false } });
    const streamed = upstream.streamCount();
    const final = await client(buyer.key)
      .chat.completions.stream({ model: model.id, messages: hello, max_tokens: 40, stream: true })
      .finalChatCompletion();
    expect(final.choices[0].message.content!.length).toBeGreaterThan(0);
    expect(upstream.streamCount()).toBe(streamed);
    expect(await clearOf(final.id)).not.toBeNull();
  });

  it("an offer that bills a cancelled answer in full is read to its end after the client hangs up, and billed for it", async () => {
    const { model, offer, buyer } = await market(ways.paced);
    const whole = await client(buyer.key).chat.completions.create({ model: model.id, messages: hello, max_tokens: 300 });
    const wholeCharge = (await clearOf(whole.id))!.chargeMicros;
    await db.offer.update({ where: { id: offer.id }, data: { billsCancelledInFull: true } });
    const cancelled = ways.paced.cancelledCount();

    const abort = new AbortController();
    const res = await rawStream(buyer.key, { model: model.id, messages: hello, max_tokens: 300 }, abort.signal);
    const id = res.headers.get("x-svc-generation-id")!;
    await res.body!.getReader().read();
    abort.abort();
    const clear = await clearOf(id, 15_000);
    expect(clear!.chargeMicros).toBe(wholeCharge);
    expect(ways.paced.cancelledCount()).toBe(cancelled);

    // A buyer routes away from it with provider.cancelled_billing: deny (here it is the model's only offer: a 503 naming it).
    const away = await rawStream(buyer.key, { model: model.id, messages: hello, max_tokens: 30, provider: { cancelled_billing: "deny" } });
    expect(away.status).toBe(503);
    expect((await away.json()).error.code).toBe("no_offer_matches_provider_cancelled_billing");
  }, 30_000);
});

describe("what a stream refuses, before its first byte", () => {
  it("answers the usual JSON error, never a half-open stream: no balance is a 402", async () => {
    const { model } = await market();
    const broke = await seedBuyer(0n);
    const res = await rawStream(broke.key, { model: model.id, messages: hello, max_tokens: 50 });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect((await res.json()).error.code).toBe("insufficient_balance");
  });

  it("stream_options without stream: true is a 400 on v2, as on OpenAI; stream: true on v1 is still stream_not_supported", async () => {
    const { model, buyer } = await market();
    const v2 = await fetch(`${app.url}/v2/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${buyer.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: model.id, messages: hello, stream_options: { include_usage: true } }),
    });
    expect(v2.status).toBe(400);
    expect((await v2.json()).error).toMatchObject({ code: "invalid_request", param: "stream_options" });
    const v1 = await fetch(`${app.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${buyer.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: model.id, messages: hello, stream: true }),
    });
    expect(v1.status).toBe(400);
    expect((await v1.json()).error.code).toBe("stream_not_supported");
  });

  it("a key at its number of open streams gets 429, and its slot comes back when a stream ends", () => {
    const key = { apiKeyId: "key-at-its-limit", accountId: "account-at-its-limit" };
    const giveBack = Array.from({ length: 128 }, () => takeStreamSlot(key));
    expect(() => takeStreamSlot(key)).toThrow(/At most 128 streams/);
    giveBack[0]();
    giveBack[0]();
    const again = takeStreamSlot(key);
    expect(() => takeStreamSlot(key)).toThrow(/At most 128 streams/);
    for (const give of [again, ...giveBack]) give();
  });
});

describe("a stopping server", () => {
  it("ends the streams still live at its drain deadline, each billed for what it sent and cleared once", { timeout: 60_000 }, async () => {
    const graceMs = 1_500;
    const victim = await startAppProcess({ SVC_TEST_EXIT_ON_SIGTERM: "1", SHUTDOWN_GRACE_MS: String(graceMs) });
    try {
      const { model, buyer } = await market(ways.paced);
      const before = await buyerBalance(buyer.id);
      const streams = await Promise.all(
        [1, 2, 3].map(async () => {
          const res = await fetch(`${victim.url}/v2/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${buyer.key}`, "content-type": "application/json" },
            body: JSON.stringify({ model: model.id, messages: hello, max_tokens: 300, stream: true }),
          });
          // Read until the first content arrived (the stream is live and has something to bill), then to its end.
          const reader = res.body!.getReader();
          const decoder = new TextDecoder();
          let text = "";
          while (!/"content":"[^"]/.test(text)) text += decoder.decode((await reader.read()).value);
          const rest = (async () => {
            for (;;) {
              const { value, done } = await reader.read();
              if (done) return text;
              text += decoder.decode(value);
            }
          })();
          return { id: res.headers.get("x-svc-generation-id")!, body: rest };
        }),
      );
      // Paced at 15 ms a token, 300 tokens outlive the 1.5 s drain window: every stream is live when SIGTERM comes.
      await victim.kill("SIGTERM");
      const bodies = await Promise.all(streams.map((s) => s.body.catch(() => "")));
      let charged = 0n;
      for (const [i, { id }] of streams.entries()) {
        const clear = await clearOf(id);
        expect(clear, `stream ${i} cleared`).not.toBeNull();
        expect(clear!.chargeMicros).toBeGreaterThan(0n);
        expect(await db.clear.count({ where: { completionId: id } })).toBe(1);
        charged += clear!.chargeMicros;
        // The client was told: an error event, not a clean [DONE].
        expect(bodies[i]).toMatch(/"error":\{/);
        expect(bodies[i]).not.toContain("[DONE]");
      }
      const after = await settled(buyer.id);
      expect(after.held).toBe(0n);
      expect(before.balance - after.balance).toBe(charged);
    } finally {
      await victim.kill();
    }
  });
});
