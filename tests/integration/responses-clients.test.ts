/**
 * POST /v1/responses with the clients agents build on, against the app over real HTTP (the route handlers behind a
 * node:http server), routed to the reference upstream: the openai SDK, the OpenAI Agents SDK, LangChain's ChatOpenAI
 * with the Responses API, and the Vercel AI SDK's OpenAI responses model. Each test asserts what its user relies on:
 * the text, the tool's arguments and the final answer, the parsed object, what it cost. And what a response is refused
 * for: nothing reserved, nothing forwarded; what it is charged: the same as the same exchange through chat completions.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool as agentTool } from "@openai/agents";
import { tool as langchainTool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { generateObject, generateText, stepCountIs, tool } from "ai";
import OpenAI from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { formatMicros } from "@/lib/money";
import { countPromptTokens } from "@/lib/upstream/tokens";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { buyerBalance, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;

let upstream: ReferenceUpstream;
let app: RouteServer;

beforeAll(async () => {
  setTracingDisabled(true);
  [upstream, app] = await Promise.all([startReferenceUpstream(), startRouteServer()]);
});

afterAll(async () => {
  await Promise.all([upstream.stop(), app.stop()]);
});

/** A private model with tools, JSON schema and vision, one offer serving all three on the reference upstream, a funded buyer. */
async function market() {
  const model = await seedPrivateModel({ supportsTools: true, supportsJsonSchema: true, supportsVision: true });
  const offer = await seedOffer({
    models: [{ id: model.id, upstreamModel: "mistral-31-24b" }],
    priceCents: 90,
    dailyCapacityMicroDiem: 100_000_000n,
    upstreamBaseUrl: upstream.url,
    upstreamApiKey: upstream.apiKey,
    features: { tools: true, json_schema: true, vision: true },
  });
  const buyer = await seedBuyer(5n * ONE_USDC);
  return { model, offer, buyer };
}

/** What the buyer paid in total, from the ledger: the sum of its clears. */
async function paid(buyerId: string) {
  const clears = await db.clear.findMany({ where: { completion: { accountId: buyerId } } });
  return { clears: clears.length, total: clears.reduce((n, c) => n + c.chargeMicros, 0n) };
}

/** The charge of a completion as its clear recorded it, by its generation id (X-Svc-Generation-Id). */
async function chargeOf(completionId: string) {
  return (await db.clear.findUniqueOrThrow({ where: { completionId } })).chargeMicros;
}

const client = (key: string) => new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 });

const weatherParameters = {
  type: "object",
  properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
  required: ["city", "unit"],
  additionalProperties: false,
};

describe("the openai SDK's responses", () => {
  it("create answers the text as output_text, with its cost, its generation and the balance left", async () => {
    const { model, buyer } = await market();
    const { data, response } = await client(buyer.key)
      .responses.create({ model: model.id, instructions: "Be brief.", input: "Hello there", max_output_tokens: 60, store: true })
      .withResponse();

    expect(data.id).toMatch(/^resp_[A-Za-z0-9]+$/);
    expect(data.object).toBe("response");
    expect(data.status).toBe("completed");
    expect(data.model).toBe(model.id);
    expect((data as unknown as { store: boolean }).store).toBe(false);
    expect(data.output_text).toContain('You said: "Hello there"');
    expect(data.usage!.input_tokens).toBe(
      await countPromptTokens({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hello there" },
        ],
      }),
    );
    expect(data.usage!.total_tokens).toBe(data.usage!.input_tokens + data.usage!.output_tokens);

    const generationId = response.headers.get("x-svc-generation-id")!;
    expect(generationId).toBe(`chatcmpl-${data.id.slice("resp_".length)}`);
    const charge = await chargeOf(generationId);
    const usage = data.usage as OpenAI.Responses.ResponseUsage & { cost: number; cost_details: { charge: string } };
    expect(usage.cost_details.charge).toBe(formatMicros(charge));
    expect(usage.cost).toBe(Number(formatMicros(charge)));
    expect(response.headers.get("x-svc-cost")).toBe(formatMicros(charge));
    expect(response.headers.get("x-balance-remaining")).toBe(formatMicros(5n * ONE_USDC - charge));
    expect(await paid(buyer.id)).toEqual({ clears: 1, total: charge });

    // The response's own id finds its generation, as the completion's does.
    const byResponseId = await fetch(`${app.url}/v1/generations/${data.id}`, { headers: { authorization: `Bearer ${buyer.key}` } });
    expect(byResponseId.status).toBe(200);
    const generation = (await byResponseId.json()) as { id: string; completion_id: string; usage: { cost_details: { charge: string } } };
    // Shown under the id the buyer was given, with the completion's own beside it.
    expect(generation).toMatchObject({ id: data.id, completion_id: generationId });
    expect(generation.usage.cost_details.charge).toBe(formatMicros(charge));
  });

  it("is incomplete (max_output_tokens) when the model stops at the output cap", async () => {
    const { model, buyer } = await market();
    const data = await client(buyer.key).responses.create({
      model: model.id,
      input: "Tell me a long story about the sea",
      max_output_tokens: 3,
    });
    expect(data.status).toBe("incomplete");
    expect(data.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(data.usage!.output_tokens).toBeLessThanOrEqual(3);
  });

  it("calls a function tool, sends its output back as function_call_output, gets the final answer, and pays for both", async () => {
    const { model, buyer } = await market();
    const openai = client(buyer.key);
    const tools: OpenAI.Responses.FunctionTool[] = [
      { type: "function", name: "get_weather", description: "Weather in a city", parameters: weatherParameters, strict: true },
    ];
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "What is the weather in Paris?" }];

    const first = await openai.responses.create({ model: model.id, input, tools, tool_choice: "auto" });
    const call = first.output.find((item) => item.type === "function_call")!;
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    expect(JSON.parse(call.arguments)).toEqual({ city: "city", unit: "celsius" });

    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]), {
      type: "function_call_output",
      call_id: call.call_id,
      output: '{"temperature":21}',
    });
    const second = await openai.responses.create({ model: model.id, input, tools });
    expect(second.status).toBe("completed");
    expect(second.output_text).toContain('The tool returned: "{"temperature":21}"');

    const { clears, total } = await paid(buyer.id);
    expect(clears).toBe(2);
    const costs = [first, second].map((r) => (r.usage as unknown as { cost_details: { charge: string } }).cost_details.charge);
    expect(formatMicros(total)).toBe(formatMicros(costs.reduce((n, c) => n + BigInt(c.replace(".", "")), 0n)));
    expect((await buyerBalance(buyer.id)).balance).toBe(5n * ONE_USDC - total);
  });

  it("parse reads a json_schema answer into the zod object (text.format)", async () => {
    const { model, buyer } = await market();
    const Person = z.object({ name: z.string(), age: z.number().int().min(18), tags: z.array(z.string()) });
    const data = await client(buyer.key).responses.parse({
      model: model.id,
      input: "Invent a person",
      text: { format: zodTextFormat(Person, "person") },
    });
    expect(data.output_parsed).toEqual({ name: "name", age: 18, tags: ["tags_0"] });
  });

  it("sends an image part, routed to an offer that serves vision and metered as the chat request would be", async () => {
    const { model, buyer } = await market();
    const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const data = await client(buyer.key).responses.create({
      model: model.id,
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "What is in this picture?" },
            { type: "input_image", image_url: png, detail: "low" },
          ],
        },
      ],
    });
    expect(data.output_text).toContain('You said: "What is in this picture?"');
    expect(data.usage!.input_tokens).toBe(
      await countPromptTokens({
        messages: [
          {
            role: "user",
            content: [{ type: "text", text: "What is in this picture?" }, { type: "image_url" }],
          },
        ],
      }),
    );

    // Without an offer serving vision, the image is not forwarded to one that cannot read it.
    const textOnly = await seedPrivateModel({ supportsTools: true });
    await seedOffer({
      models: [{ id: textOnly.id, upstreamModel: "llama-3.3-70b" }],
      priceCents: 90,
      dailyCapacityMicroDiem: 100_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
      features: { tools: true },
    });
    const refused = await client(buyer.key)
      .responses.create({
        model: textOnly.id,
        input: [{ role: "user", content: [{ type: "input_image", image_url: png, detail: "auto" }] }],
      })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 503, code: "no_offer_supports_vision" });
  });
});

/** POST /v1/responses with a raw body, as any HTTP client sends it. */
function postResponses(key: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${app.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
  });
}

describe("what POST /v1/responses refuses and what it charges", () => {
  it.each([
    ["previous_response_id", { previous_response_id: "resp_abc" }, "invalid_request", "previous_response_id"],
    ["background", { background: true }, "invalid_request", "background"],
    ["a built-in tool", { tools: [{ type: "web_search_preview" }] }, "invalid_request", "tools.0.type"],
    ["file search", { tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }] }, "invalid_request", "tools.0.type"],
    [
      "computer use",
      { tools: [{ type: "computer_use_preview", display_width: 800, display_height: 600, environment: "browser" }] },
      "invalid_request",
      "tools.0.type",
    ],
    ["stream: true", { stream: true }, "stream_not_supported", "stream"],
  ])("refuses %s with a 400 naming the field, nothing reserved, nothing forwarded", async (_, fields, code, param) => {
    const { model, buyer } = await market();
    const before = upstream.requestCount();
    const res = await postResponses(buyer.key, { model: model.id, input: "Hello", ...fields });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string; param?: string } };
    expect(body.error.code).toBe(code);
    expect(body.error.message).toContain(param.split(".")[0]);
    expect(upstream.requestCount()).toBe(before);
    expect(await db.hold.count({ where: { accountId: buyer.id } })).toBe(0);
    expect(await buyerBalance(buyer.id)).toEqual({ balance: 5n * ONE_USDC, held: 0n });
  });

  it("answers 503 with the X-Svc-* headers when no offer is at or below the max price, as chat completions do", async () => {
    const { model, buyer } = await market();
    const res = await postResponses(buyer.key, { model: model.id, input: "Hello" }, { "x-svc-max-cents": "50" });
    expect(res.status).toBe(503);
    expect(res.headers.get("x-svc-error-code")).toBe("no_offer_at_or_below_max");
    expect(res.headers.get("x-svc-buyer-max-cents")).toBe("50");
    expect(res.headers.get("x-svc-cheapest-posted-cents")).toBe("90");
    expect(res.headers.get("x-svc-routable-diem-above-max")).not.toBeNull();
    expect((await paid(buyer.id)).clears).toBe(0);
  });

  it("charges a response exactly what the same exchange costs through chat completions", async () => {
    const { model, buyer } = await market();
    const openai = client(buyer.key);
    const tools: OpenAI.Responses.FunctionTool[] = [
      { type: "function", name: "get_weather", description: "Weather in a city", parameters: weatherParameters, strict: true },
    ];
    const viaResponses = await openai.responses
      .create({ model: model.id, instructions: "Be brief.", input: "What is the weather in Paris?", tools, max_output_tokens: 200 })
      .withResponse();
    const viaChat = await openai.chat.completions
      .create({
        model: model.id,
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "What is the weather in Paris?" },
        ],
        tools: [
          {
            type: "function",
            function: { name: "get_weather", description: "Weather in a city", parameters: weatherParameters, strict: true },
          },
        ],
        max_completion_tokens: 200,
      })
      .withResponse();

    const responseCharge = await chargeOf(viaResponses.response.headers.get("x-svc-generation-id")!);
    const chatCharge = await chargeOf(viaChat.data.id);
    expect(responseCharge).toBeGreaterThan(0n);
    expect(responseCharge).toBe(chatCharge);
    expect(viaResponses.data.usage!.input_tokens).toBe(viaChat.data.usage!.prompt_tokens);
    expect(viaResponses.data.usage!.output_tokens).toBe(viaChat.data.usage!.completion_tokens);
    expect(await paid(buyer.id)).toEqual({ clears: 2, total: 2n * chatCharge });
  });
});

describe("the OpenAI Agents SDK", () => {
  it("runs an agent with a function tool to its final output, svc as its OpenAI client (Responses API, not streamed)", async () => {
    const { model, buyer } = await market();
    const seen: unknown[] = [];
    const getWeather = agentTool({
      name: "get_weather",
      description: "Weather in a city",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        seen.push(city);
        return `sunny and 21 degrees in ${city}`;
      },
    });
    const agent = new Agent({ name: "Weather", instructions: "Answer with the weather.", model: model.id, tools: [getWeather] });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey: buyer.key, baseURL: `${app.url}/v1`, useResponses: true }) });

    const result = await runner.run(agent, "What is the weather in Paris?");

    expect(seen).toEqual(["city"]);
    expect(result.finalOutput).toContain('The tool returned: "sunny and 21 degrees in city"');
    expect(app.requests.filter((r) => r === "POST /v1/responses").length).toBeGreaterThanOrEqual(2);
    expect((await paid(buyer.id)).clears).toBe(2);
  });
});

describe("LangChain's ChatOpenAI with the Responses API", () => {
  const chat = (key: string, model: string) =>
    new ChatOpenAI({ model, apiKey: key, maxRetries: 0, useResponsesApi: true, configuration: { baseURL: `${app.url}/v1` } });

  it("invokes and gets the text, and bindTools gets a tool call with its arguments", async () => {
    const { model, buyer } = await market();
    const reply = await chat(buyer.key, model.id).invoke("Hello there");
    expect(reply.text).toContain('You said: "Hello there"');

    const weather = langchainTool(async ({ city }: { city: string }) => `sunny in ${city}`, {
      name: "get_weather",
      description: "Weather in a city",
      schema: z.object({ city: z.string() }),
    });
    const call = await chat(buyer.key, model.id).bindTools([weather]).invoke("What is the weather in Paris?");
    expect(call.tool_calls).toEqual([expect.objectContaining({ name: "get_weather", args: { city: "city" } })]);
    expect(app.requests.filter((r) => r === "POST /v1/responses").length).toBeGreaterThanOrEqual(2);
    expect((await paid(buyer.id)).clears).toBe(2);
  });
});

describe("the Vercel AI SDK's OpenAI responses model", () => {
  const provider = (key: string) => createOpenAI({ baseURL: `${app.url}/v1`, apiKey: key });

  it("runs a tool in a two-step generateText and answers with its result", async () => {
    const { model, buyer } = await market();
    const seen: unknown[] = [];
    const result = await generateText({
      model: provider(buyer.key).responses(model.id),
      prompt: "What is the weather in Paris?",
      tools: {
        weather: tool({
          description: "Weather in a city",
          inputSchema: z.object({ city: z.string() }),
          execute: async (input) => {
            seen.push(input);
            return { city: input.city, temperature: 21 };
          },
        }),
      },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
    });

    expect(result.steps).toHaveLength(2);
    expect(seen).toEqual([{ city: "city" }]);
    expect(result.text).toContain('The tool returned: "{"city":"city","temperature":21}"');
    expect(result.response.headers?.["x-svc-cost"]).toMatch(/^\d+\.\d{6}$/);
    expect((await paid(buyer.id)).clears).toBe(2);
  });

  it("generateObject returns the zod-typed object", async () => {
    const { model, buyer } = await market();
    const { object, response } = await generateObject({
      model: provider(buyer.key).responses(model.id),
      schema: z.object({ title: z.string().min(3), year: z.number().int().min(1900).max(2100), done: z.boolean() }),
      prompt: "Describe a film",
      maxRetries: 0,
    });
    expect(object).toEqual({ title: "title", year: 1900, done: true });
    expect(response.headers?.["x-svc-cost"]).toMatch(/^\d+\.\d{6}$/);
  });
});
