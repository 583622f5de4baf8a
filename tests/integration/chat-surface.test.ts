/**
 * The chat-completions surface through the route: every new request field validated (a 400 naming it,
 * nothing charged, nothing forwarded), what is forwarded and what comes back, metering of tools, schemas and
 * images, and routing by the features a request uses.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as modelsRoute } from "@/app/v1/models/route";
import { POST as postOffer } from "@/app/v1/supply/offers/route";
import { db } from "@/lib/db/client";
import { clearMarketCache } from "@/lib/market/cache";
import type { ModelListing } from "@/lib/market/schemas";
import { burnMicroDiem, chargeMicros } from "@/lib/money";
import { IMAGE_TOKENS, countPromptTokens } from "@/lib/upstream/tokens";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { completion, startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { buyerBalance, callCompletions, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;
const hello = { role: "user", content: "Hello" };
const weather = {
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

let reference: ReferenceUpstream;
let canned: CannedUpstream;

beforeAll(async () => {
  [reference, canned] = await Promise.all([startReferenceUpstream(), startCannedUpstream()]);
});
afterAll(async () => {
  await Promise.all([reference.stop(), canned.stop()]);
});

type Features = { tools?: boolean; json_schema?: boolean; vision?: boolean };

/** A private model (all features) with offers, each on an upstream and serving some features. */
async function market(
  offers: { price_cents: number; features?: Features; via?: ReferenceUpstream | CannedUpstream; upstream_model?: string }[],
) {
  const model = await seedPrivateModel({ supportsTools: true, supportsJsonSchema: true, supportsVision: true });
  const created = [];
  for (const o of offers) {
    const via = o.via ?? reference;
    created.push(
      await seedOffer({
        models: [{ id: model.id, upstreamModel: o.upstream_model ?? (via === reference ? "llama-3.3-70b" : "canned-model") }],
        priceCents: o.price_cents,
        dailyCapacityMicroDiem: 100_000_000n,
        upstreamBaseUrl: via.url,
        upstreamApiKey: via.apiKey,
        features: o.features,
      }),
    );
  }
  return { model, offers: created };
}

describe("a 400 that names the field, for every new field; nothing charged, nothing forwarded", () => {
  const nested = (depth: number): Record<string, unknown> =>
    depth === 0 ? { type: "string" } : { type: "object", properties: { x: nested(depth - 1) } };
  const image = (url: string) => ({ role: "user", content: [{ type: "image_url", image_url: { url } }] });
  const cases: [string, Record<string, unknown>, string][] = [
    ["a tool name with spaces", { tools: [{ type: "function", function: { name: "get weather" } }] }, "tools.0.function.name"],
    ["tools that are not a list", { tools: { type: "function" } }, "tools"],
    ["a tool of another type", { tools: [{ type: "code_interpreter" }] }, "tools.0.type"],
    ["the same tool twice", { tools: [weather, weather] }, "tools.1.function.name"],
    ["129 tools", { tools: Array.from({ length: 129 }, (_, i) => ({ type: "function", function: { name: `t${i}` } })) }, "tools"],
    // 20 properties deep is 41 levels of JSON: past a schema's 32, within the body's MAX_JSON_DEPTH (deeper is json_too_deep).
    [
      "a tool schema nested 20 properties deep",
      { tools: [{ type: "function", function: { name: "deep", parameters: nested(20) } }] },
      "tools.0.function.parameters",
    ],
    ["an unknown tool_choice", { tools: [weather], tool_choice: "sometimes" }, "tool_choice"],
    ["tool_choice without tools", { tool_choice: "auto" }, "tool_choice"],
    [
      "tool_choice naming no tool",
      { tools: [weather], tool_choice: { type: "function", function: { name: "nope" } } },
      "tool_choice.function.name",
    ],
    ["parallel_tool_calls without tools", { parallel_tool_calls: true }, "parallel_tool_calls"],
    ["parallel_tool_calls not a boolean", { tools: [weather], parallel_tool_calls: "yes" }, "parallel_tool_calls"],
    [
      "an audio content part",
      { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "", format: "wav" } }] }] },
      "messages.0.content",
    ],
    ["an image over plain http", { messages: [image("http://example.com/cat.png")] }, "messages.0.content.0.image_url.url"],
    [
      "an image detail level that does not exist",
      { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://e.com/a.png", detail: "max" } }] }] },
      "messages.0.content",
    ],
    [
      "65 images",
      {
        messages: [
          { role: "user", content: Array.from({ length: 65 }, () => ({ type: "image_url", image_url: { url: "https://e.com/a.png" } })) },
        ],
      },
      "messages",
    ],
    [
      "an image in a system message",
      { messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "https://e.com/a.png" } }] }, hello] },
      "messages.0.content",
    ],
    [
      "an assistant message with neither content nor tool_calls",
      { messages: [hello, { role: "assistant", content: null }, hello] },
      "messages.1.content",
    ],
    [
      "a tool call of another type",
      { messages: [hello, { role: "assistant", tool_calls: [{ id: "c1", type: "custom", function: { name: "f", arguments: "{}" } }] }] },
      "messages.1.tool_calls.0.type",
    ],
    ["a tool message without tool_call_id", { messages: [hello, { role: "tool", content: "42" }] }, "messages.1.tool_call_id"],
    ["a role that does not exist", { messages: [{ role: "wizard", content: "hi" }] }, "messages.0.role"],
    ["a response_format of another type", { response_format: { type: "xml" } }, "response_format.type"],
    [
      "a json_schema without a name",
      { response_format: { type: "json_schema", json_schema: { schema: {} } } },
      "response_format.json_schema.name",
    ],
    [
      "a json_schema nested 20 properties deep",
      { response_format: { type: "json_schema", json_schema: { name: "deep", schema: nested(20) } } },
      "response_format.json_schema.schema",
    ],
    ["logprobs not a boolean", { logprobs: "true" }, "logprobs"],
    ["top_logprobs above 20", { logprobs: true, top_logprobs: 21 }, "top_logprobs"],
    ["top_logprobs without logprobs", { top_logprobs: 2 }, "top_logprobs"],
    ["a logit_bias key that is not a token id", { logit_bias: { hello: 1 } }, "logit_bias.hello"],
    ["a logit_bias above 100", { logit_bias: { "1": 101 } }, "logit_bias.1"],
    ["an unknown reasoning_effort", { reasoning_effort: "extreme" }, "reasoning_effort"],
    ["a reasoning effort contradicting reasoning_effort", { reasoning_effort: "low", reasoning: { effort: "high" } }, "reasoning.effort"],
    ["a reasoning budget of 0", { reasoning: { max_tokens: 0 } }, "reasoning.max_tokens"],
    ["a fractional reasoning budget", { reasoning: { max_tokens: 10.5 } }, "reasoning.max_tokens"],
    ["a reasoning budget with reasoning turned off", { reasoning_effort: "none", reasoning: { max_tokens: 100 } }, "reasoning.max_tokens"],
    ["reasoning disabled at an effort", { reasoning: { enabled: false, effort: "high" } }, "reasoning.enabled"],
    ["an unknown reasoning setting", { reasoning: { budget_tokens: 100 } }, "reasoning.budget_tokens"],
    ["five stop sequences", { stop: ["a", "b", "c", "d", "e"] }, "stop"],
    ["a fractional seed", { seed: 1.5 }, "seed"],
    ["a user id of 257 characters", { user: "u".repeat(257) }, "user"],
    ["17 metadata keys", { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }, "metadata"],
    ["a metadata value that is not a string", { metadata: { k: 1 } }, "metadata.k"],
    ["stream_options of the wrong shape", { stream_options: { include_usage: "yes" } }, "stream_options.include_usage"],
  ];

  it.each(cases)("%s", async (_label, patch, param) => {
    const { model } = await market([{ price_cents: 100, via: canned, features: { tools: true, json_schema: true, vision: true } }]);
    const buyer = await seedBuyer(ONE_USDC);
    const forwardedBefore = canned.received.length;

    const res = await callCompletions(buyer.key, { model: model.id, messages: [hello], ...patch });

    expect(res.status).toBe(400);
    const error = await readError(res);
    expect(["invalid_request", "unknown_field"]).toContain(error.code);
    expect((error as { param?: string }).param).toBe(param);
    expect(error.message).toContain(param);
    expect(canned.received.length).toBe(forwardedBefore);
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC, held: 0n });
    expect(await db.hold.count({ where: { accountId: buyer.id } })).toBe(0);
  });

  it("stream: true is stream_not_supported even beside unknown fields or stream_options", async () => {
    const { model } = await market([{ price_cents: 100 }]);
    const buyer = await seedBuyer(ONE_USDC);
    for (const patch of [
      { stream: true, bogus_field: 1 },
      { stream: true, stream_options: { include_usage: true } },
      { stream: true, tools: "broken" },
    ]) {
      const res = await callCompletions(buyer.key, { model: model.id, messages: [hello], ...patch });
      expect(res.status).toBe(400);
      expect(await readError(res)).toMatchObject({ code: "stream_not_supported", param: "stream" });
    }
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC, held: 0n });
  });

  it("an unknown field is still unknown_field, named", async () => {
    const { model } = await market([{ price_cents: 100 }]);
    const buyer = await seedBuyer(ONE_USDC);
    const res = await callCompletions(buyer.key, { model: model.id, messages: [{ ...hello, audio: {} }] });
    expect(await readError(res)).toMatchObject({ code: "unknown_field", message: expect.stringContaining('"messages.0.audio"') });
  });
});

describe("what is forwarded and what comes back", () => {
  it("forwards the OpenAI fields with the upstream's model name and our token cap, and never stream_options or metadata", async () => {
    const { model } = await market([{ price_cents: 100, via: canned, features: { tools: true, json_schema: true } }]);
    const buyer = await seedBuyer(ONE_USDC);
    canned.answer({ status: 200, body: completion({ content: "ok" }) });
    const sent = {
      model: model.id,
      messages: [
        { role: "developer", content: [{ type: "text", text: "Be brief." }] },
        hello,
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "cold" },
      ],
      tools: [weather],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      response_format: {
        type: "json_schema",
        json_schema: { name: "answer", strict: true, schema: { type: "object", properties: { a: { type: "string" } } } },
      },
      logprobs: true,
      top_logprobs: 3,
      logit_bias: { "50256": -100 },
      reasoning_effort: "low",
      stop: ["\n\n"],
      seed: 7,
      user: "end-user-1",
      metadata: { team: "a" },
      stream: false,
      stream_options: { include_usage: true },
      max_completion_tokens: 77,
      temperature: null,
    };

    const res = await callCompletions(buyer.key, sent);

    expect(res.status).toBe(200);
    const { headers, body } = canned.received.at(-1)!;
    expect(headers["x-svc-hop"]).toBe("1");
    const { metadata: _m, stream_options: _s, max_completion_tokens: _c, temperature: _t, model: _model, ...rest } = sent;
    expect(body).toEqual({ ...rest, model: "canned-model", max_tokens: 77, stream: false });
  });

  it("passes tool calls, refusal, finish_reason, logprobs, fingerprint and usage details back under our own id and model", async () => {
    const { model } = await market([{ price_cents: 100, via: canned, features: { tools: true } }]);
    const buyer = await seedBuyer(ONE_USDC);
    const request = { model: model.id, messages: [hello], tools: [weather] };
    const ours = await countPromptTokens(request);
    const logprobs = { content: [{ token: "x", logprob: -0.1, bytes: [120], top_logprobs: [] }] };
    const call = { id: "call_abc", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } };
    canned.answer({
      status: 200,
      body: {
        ...completion(
          { content: null, refusal: null, tool_calls: [call] },
          {
            prompt_tokens: ours,
            completion_tokens: 12,
            total_tokens: ours + 12,
            prompt_tokens_details: { cached_tokens: 4 },
            completion_tokens_details: { reasoning_tokens: 99 },
          },
          { system_fingerprint: "fp_upstream" },
        ),
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: null, refusal: null, tool_calls: [call] },
            finish_reason: "tool_calls",
            logprobs,
          },
        ],
      },
    });

    const res = await callCompletions(buyer.key, request);

    expect(res.status).toBe(200);
    const data = await res.json();
    expect(data.id).toMatch(/^chatcmpl-/);
    expect(data.id).not.toBe("chatcmpl-upstream-own-id");
    expect(data.model).toBe(model.id);
    expect(data.system_fingerprint).toBe("fp_upstream");
    expect(data.choices).toEqual([
      { index: 0, message: { role: "assistant", content: null, refusal: null, tool_calls: [call] }, finish_reason: "tool_calls", logprobs },
    ]);
    // 12 claimed output tokens are within the tolerance of our count of the call; reasoning cannot exceed the output billed.
    expect(data.usage).toEqual({
      prompt_tokens: ours,
      completion_tokens: 12,
      total_tokens: ours + 12,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 12 },
      // What it cost (tests/integration/generations.test.ts holds these to the ledger).
      cost: expect.any(Number),
      cost_details: expect.objectContaining({ usage_estimated: false }),
    });
  });

  it("passes a refusal and a content_filter finish", async () => {
    const { model } = await market([{ price_cents: 100, via: canned }]);
    const buyer = await seedBuyer(ONE_USDC);
    canned.answer({
      status: 200,
      body: {
        ...completion({}),
        choices: [
          { index: 0, message: { role: "assistant", content: null, refusal: "I can't help with that." }, finish_reason: "content_filter" },
        ],
      },
    });
    const data = await (await callCompletions(buyer.key, { model: model.id, messages: [hello] })).json();
    expect(data.choices[0]).toMatchObject({
      message: { content: null, refusal: "I can't help with that." },
      finish_reason: "content_filter",
    });
  });
});

describe("metering of tools, schemas and images", () => {
  it("bills tool definitions and the response schema as prompt tokens, as the upstream counts them", async () => {
    const { model } = await market([{ price_cents: 100, features: { tools: true, json_schema: true } }]);
    const buyer = await seedBuyer(ONE_USDC);
    const plain = { model: model.id, messages: [hello], max_tokens: 40 };
    const heavy = {
      ...plain,
      tools: [weather],
      tool_choice: "none",
      response_format: {
        type: "json_schema",
        json_schema: { name: "reply", schema: { type: "object", properties: { reply: { type: "string", description: "x".repeat(400) } } } },
      },
    };
    const a = await (await callCompletions(buyer.key, plain)).json();
    const b = await (await callCompletions(buyer.key, heavy)).json();
    expect(b.usage.prompt_tokens).toBe(await countPromptTokens(heavy as never));
    expect(b.usage.prompt_tokens - a.usage.prompt_tokens).toBeGreaterThan(50);
  });

  it(`reserves and bills each image at ${IMAGE_TOKENS} tokens at most`, async () => {
    const { model } = await market([{ price_cents: 100, via: canned, features: { vision: true } }]);
    const buyer = await seedBuyer(ONE_USDC);
    const request = {
      model: model.id,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          ],
        },
      ],
      max_tokens: 10,
    };
    const ours = await countPromptTokens(request as never);
    expect(ours).toBeGreaterThan(IMAGE_TOKENS);
    // The upstream claims far more for the image than the bound: that side is billed at our count.
    canned.answer({
      status: 200,
      body: completion({ content: "A cat." }, { prompt_tokens: 20_000, completion_tokens: 3, total_tokens: 20_003 }),
    });
    const res = await callCompletions(buyer.key, request);
    const data = await res.json();
    expect(data.usage.prompt_tokens).toBe(ours);
    const hold = await db.hold.findFirstOrThrow({ where: { accountId: buyer.id } });
    expect(hold.burnMicroDiem).toBeGreaterThanOrEqual(burnMicroDiem(ours, 10, model));
  });
});

describe("routing by feature", () => {
  it("sends a request with tools only to an offer that serves tools, even when a cheaper one does not", async () => {
    const { model, offers } = await market([{ price_cents: 50 }, { price_cents: 90, features: { tools: true } }]);
    const buyer = await seedBuyer(ONE_USDC);
    const withTools = await callCompletions(buyer.key, { model: model.id, messages: [hello], tools: [weather], max_tokens: 20 });
    expect(withTools.status).toBe(200);
    expect(withTools.headers.get("x-svc-price-cents")).toBe("90");
    const plain = await callCompletions(buyer.key, { model: model.id, messages: [hello], max_tokens: 20 });
    expect(plain.headers.get("x-svc-price-cents")).toBe("50");
    const clears = await db.clear.findMany({ where: { completion: { accountId: buyer.id } }, orderBy: { createdAt: "asc" } });
    expect(clears.map((c) => c.offerId)).toEqual([offers[1].id, offers[0].id]);
    expect(clears[0].chargeMicros).toBe(chargeMicros(clears[0].burnMicroDiem, 90));
  });

  it.each([
    ["tools", { tools: [weather] }, "no_offer_supports_tools"],
    [
      "json_schema",
      { response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } } },
      "no_offer_supports_json_schema",
    ],
    [
      "vision",
      { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://e.com/a.png" } }] }] },
      "no_offer_supports_vision",
    ],
  ] as const)("answers 503 naming %s when no offer serves it, with the four X-Svc headers", async (_feature, patch, code) => {
    const { model } = await market([
      { price_cents: 60 },
      { price_cents: 70, features: { tools: true, json_schema: true, vision: true }, via: reference },
    ]);
    await db.offerModel.updateMany({
      where: { modelId: model.id, supportsTools: true },
      data: {
        supportsTools: code !== "no_offer_supports_tools",
        supportsJsonSchema: code !== "no_offer_supports_json_schema",
        supportsVision: code !== "no_offer_supports_vision",
      },
    });
    const buyer = await seedBuyer(ONE_USDC);

    const res = await callCompletions(buyer.key, { model: model.id, messages: [hello], max_tokens: 10, ...patch });

    expect(res.status).toBe(503);
    expect(res.headers.get("x-svc-error-code")).toBe(code);
    expect(res.headers.get("x-svc-buyer-max-cents")).toBe("100");
    expect(res.headers.get("x-svc-cheapest-posted-cents")).toBe("");
    expect(res.headers.get("x-svc-routable-diem-above-max")).toBe("0.000000");
    expect(await readError(res)).toMatchObject({ code, missing_feature: _feature });
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC, held: 0n });
  });

  it("lists supported_parameters per model from what the offers on the book serve", async () => {
    const { model } = await market([{ price_cents: 60, features: { json_schema: true } }]);
    clearMarketCache();
    const { data } = (await (await modelsRoute(jsonRequest("GET", "/v1/models"))).json()) as { data: ModelListing[] };
    const listing = data.find((m) => m.id === model.id)!;
    expect(listing.supported_parameters).toContain("structured_outputs");
    expect(listing.supported_parameters).toContain("response_format");
    expect(listing.supported_parameters).not.toContain("tools");
    expect(listing.input_modalities).toEqual(["text"]);
    const llama = data.find((m) => m.id === "llama-3.3-70b");
    expect(llama?.supported_parameters).toEqual(expect.arrayContaining(["tools", "tool_choice", "structured_outputs"]));
  });

  it("records at posting what the upstream says a model serves (Venice capabilities), and keeps the catalog's when it says nothing", async () => {
    const model = await seedPrivateModel({ supportsTools: true, supportsJsonSchema: true, supportsVision: true });
    const silent = await startCannedUpstream([{ id: "silent-model" }]);
    try {
      const supplier = await seedSignedInAccount();
      const post = (baseUrl: string, apiKey: string, upstream_model: string) =>
        postOffer(
          jsonRequest(
            "POST",
            "/v1/supply/offers",
            {
              upstream_base_url: baseUrl,
              upstream_api_key: apiKey,
              models: [{ id: model.id, upstream_model }],
              price_cents: 80,
              daily_capacity: "5",
            },
            { cookie: supplier.cookie },
          ),
        );
      const told = await (await post(reference.url, reference.apiKey, "llama-3.3-70b")).json();
      expect(told.models).toEqual([{ id: model.id, upstream_model: "llama-3.3-70b", features: ["tools", "json_schema"] }]);
      const untold = await (await post(silent.url, silent.apiKey, "silent-model")).json();
      expect(untold.models[0].features).toEqual(["tools", "json_schema", "vision"]);
    } finally {
      await silent.stop();
    }
  });
});
