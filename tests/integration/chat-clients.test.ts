/**
 * The clients agents build on, against the app over real HTTP (the route handlers behind a node:http server),
 * routed to the reference upstream: the openai SDK, the Vercel AI SDK (with the openai-compatible provider and with
 * OpenRouter's) and LangChain JS. Each test asserts what its user relies on: the tool's arguments, the parsed object,
 * the final answer, what it cost (usage.cost, as OpenRouter's clients read it).
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { tool as langchainTool } from "@langchain/core/tools";
import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import { ChatOpenAI } from "@langchain/openai";
import { generateObject, generateText, stepCountIs, tool } from "ai";
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
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
  [upstream, app] = await Promise.all([startReferenceUpstream(), startRouteServer()]);
});

afterAll(async () => {
  await Promise.all([upstream.stop(), app.stop()]);
});

/** A private model with tools and JSON schema, one offer serving both on the reference upstream, and a funded buyer. */
async function market() {
  const model = await seedPrivateModel({ supportsTools: true, supportsJsonSchema: true });
  const offer = await seedOffer({
    models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
    priceCents: 90,
    dailyCapacityMicroDiem: 100_000_000n,
    upstreamBaseUrl: upstream.url,
    upstreamApiKey: upstream.apiKey,
    features: { tools: true, json_schema: true },
  });
  const buyer = await seedBuyer(5n * ONE_USDC);
  return { model, offer, buyer };
}

/** What the buyer paid in total, from the ledger: the sum of its clears. */
async function paid(buyerId: string) {
  const clears = await db.clear.findMany({ where: { completion: { accountId: buyerId } } });
  return { clears: clears.length, total: clears.reduce((n, c) => n + c.chargeMicros, 0n) };
}

const weatherParameters = {
  type: "object",
  properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
  required: ["city", "unit"],
  additionalProperties: false,
};

describe("the openai SDK", () => {
  it("calls a tool, sends its result back, gets the final answer, and pays for both turns", async () => {
    const { model, buyer } = await market();
    const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: buyer.key, maxRetries: 0 });
    const tools = [
      { type: "function" as const, function: { name: "get_weather", description: "Weather in a city", parameters: weatherParameters } },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "What is the weather in Paris?" }];

    const first = await client.chat.completions.create({ model: model.id, messages, tools, tool_choice: "auto" }).withResponse();
    const call = first.data.choices[0].message.tool_calls![0];
    expect(first.data.choices[0].finish_reason).toBe("tool_calls");
    expect(call.type === "function" && call.function.name).toBe("get_weather");
    const args = JSON.parse(call.type === "function" ? call.function.arguments : "null");
    expect(args).toEqual({ city: "city", unit: "celsius" });
    expect(first.data.usage!.prompt_tokens).toBe(
      await countPromptTokens({ messages: [{ role: "user", content: "What is the weather in Paris?" }], tools }),
    );

    messages.push(first.data.choices[0].message, { role: "tool", tool_call_id: call.id, content: '{"temperature":21}' });
    const second = await client.chat.completions.create({ model: model.id, messages, tools }).withResponse();
    expect(second.data.choices[0].finish_reason).toBe("stop");
    expect(second.data.choices[0].message.content).toContain('The tool returned: "{"temperature":21}"');

    const costs = [first, second].map((r) => r.response.headers.get("x-svc-cost")!);
    const { clears, total } = await paid(buyer.id);
    expect(clears).toBe(2);
    expect(formatMicros(total)).toBe(formatMicros(costs.reduce((n, c) => n + BigInt(c.replace(".", "")), 0n)));
    expect((await buyerBalance(buyer.id)).balance).toBe(5n * ONE_USDC - total);
  });

  it("parses a json_schema answer into the zod object", async () => {
    const { model, buyer } = await market();
    const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: buyer.key, maxRetries: 0 });
    const Person = z.object({ name: z.string(), age: z.number().int().min(18), tags: z.array(z.string()) });

    const { data, response } = await client.chat.completions
      .parse({
        model: model.id,
        messages: [{ role: "user", content: "Invent a person" }],
        response_format: zodResponseFormat(Person, "person"),
      })
      .withResponse();

    expect(data.choices[0].message.parsed).toEqual({ name: "name", age: 18, tags: ["tags_0"] });
    expect(BigInt(response.headers.get("x-svc-cost")!.replace(".", ""))).toBeGreaterThan(0n);
  });

  it("sends content parts, which the upstream reads as text", async () => {
    const { model, buyer } = await market();
    const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: buyer.key, maxRetries: 0 });
    const content = [
      { type: "text" as const, text: "first part" },
      { type: "text" as const, text: "second part" },
    ];
    const data = await client.chat.completions.create({ model: model.id, messages: [{ role: "user", content }], max_tokens: 60 });
    expect(data.choices[0].message.content).toContain('You said: "first part second part"');
    expect(data.usage!.prompt_tokens).toBe(await countPromptTokens({ messages: [{ role: "user", content }] }));
  });
});

/** The charge of a completion as its clear recorded it, by the answer's id. */
async function chargeOf(completionId: string) {
  return (await db.clear.findUniqueOrThrow({ where: { completionId } })).chargeMicros;
}

describe("usage.cost, read by OpenRouter's clients", () => {
  it("the openai SDK reads usage.cost and usage.cost_details off the raw response", async () => {
    const { model, buyer } = await market();
    const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: buyer.key, maxRetries: 0 });
    const request = { model: model.id, messages: [{ role: "user" as const, content: "How much was this?" }], max_tokens: 40 };

    const raw = await client.chat.completions.create(request).asResponse();
    const body = (await raw.json()) as { id: string; usage: { cost: number; cost_details: { charge: string } } };
    expect(raw.headers.get("x-svc-generation-id")).toBe(body.id);
    const charge = await chargeOf(body.id);
    expect(body.usage.cost_details.charge).toBe(formatMicros(charge));
    expect(body.usage.cost).toBe(Number(formatMicros(charge)));
    expect(body.usage.cost).toBeGreaterThan(0);

    // The parsed completion keeps the fields the SDK does not know, so withResponse() has them too.
    const { data, response } = await client.chat.completions.create(request).withResponse();
    const usage = data.usage as OpenAI.CompletionUsage & { cost: number; cost_details: { charge: string } };
    expect(usage.cost).toBe(Number(formatMicros(await chargeOf(data.id))));
    expect(usage.cost_details.charge).toBe(response.headers.get("x-svc-cost"));
  });

  it("OpenRouter's provider for the Vercel AI SDK, pointed at svc, reports the cost in its provider metadata", async () => {
    const { model, buyer } = await market();
    const openrouter = createOpenRouter({ baseURL: `${app.url}/v1`, apiKey: buyer.key });
    const result = await generateText({
      model: openrouter.chat(model.id),
      prompt: "How much was this?",
      maxOutputTokens: 40,
      maxRetries: 0,
    });

    expect(result.text).toContain("How much was this?");
    const id = result.response.id;
    const metadata = result.providerMetadata?.openrouter as { usage?: { cost?: number; promptTokens?: number } } | undefined;
    expect(metadata?.usage?.cost).toBe(Number(formatMicros(await chargeOf(id))));
    expect(metadata?.usage?.promptTokens).toBe(result.usage.inputTokens);
    expect(result.response.headers?.["x-svc-generation-id"]).toBe(id);
  });
});

describe("the Vercel AI SDK", () => {
  const provider = (key: string) =>
    createOpenAICompatible({ name: "svc", baseURL: `${app.url}/v1`, apiKey: key, supportsStructuredOutputs: true });

  it("runs a tool in a two-step generateText and answers with its result", async () => {
    const { model, buyer } = await market();
    const seen: unknown[] = [];
    const result = await generateText({
      model: provider(buyer.key)(model.id),
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
    expect(result.steps[0].toolCalls[0]).toMatchObject({ toolName: "weather", input: { city: "city" } });
    expect(result.text).toContain('The tool returned: "{"city":"city","temperature":21}"');
    expect(result.response.headers?.["x-svc-cost"]).toMatch(/^\d+\.\d{6}$/);
    expect((await paid(buyer.id)).clears).toBe(2);
  });

  it("generateObject returns the zod-typed object", async () => {
    const { model, buyer } = await market();
    const { object, response } = await generateObject({
      model: provider(buyer.key)(model.id),
      schema: z.object({ title: z.string().min(3), year: z.number().int().min(1900).max(2100), done: z.boolean() }),
      prompt: "Describe a film",
      maxRetries: 0,
    });
    expect(object).toEqual({ title: "title", year: 1900, done: true });
    expect(response.headers?.["x-svc-cost"]).toMatch(/^\d+\.\d{6}$/);
  });
});

describe("LangChain JS", () => {
  const chat = (key: string, model: string) =>
    new ChatOpenAI({ model, apiKey: key, maxRetries: 0, configuration: { baseURL: `${app.url}/v1` } });

  it("bindTools gets a tool call with its arguments", async () => {
    const { model, buyer } = await market();
    const weather = langchainTool(async ({ city }: { city: string }) => `sunny in ${city}`, {
      name: "get_weather",
      description: "Weather in a city",
      schema: z.object({ city: z.string() }),
    });
    const reply = await chat(buyer.key, model.id).bindTools([weather]).invoke("What is the weather in Paris?");
    expect(reply.tool_calls).toEqual([expect.objectContaining({ name: "get_weather", args: { city: "city" } })]);
    expect((await paid(buyer.id)).total).toBeGreaterThan(0n);
  });

  it("withStructuredOutput returns the parsed object", async () => {
    const { model, buyer } = await market();
    const structured = chat(buyer.key, model.id).withStructuredOutput(
      z.object({ answer: z.string(), confidence: z.number().min(0).max(1) }),
    );
    const result = await structured.invoke("Is the sky blue?");
    expect(result).toEqual({ answer: "answer", confidence: 0 });
    expect((await paid(buyer.id)).clears).toBe(1);
  });

  it(".stream() is refused with stream_not_supported, not an unknown field", async () => {
    const { model, buyer } = await market();
    const error = await (async () => {
      for await (const chunk of await chat(buyer.key, model.id).stream("hi")) void chunk;
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "stream_not_supported" });
    expect((await paid(buyer.id)).clears).toBe(0);
  });
});
