/**
 * Bounded work per byte of input (issue 34): a body's depth and value count are checked by a linear scan of its text
 * before it is parsed (lib/json-limits.ts, lib/http/body.ts), on every route, so no small request holds the event
 * loop. Through the front door of an app in its own process (tests/helpers/app-process.ts), so /healthz, polled
 * meanwhile, measures that process's event loop and not this one's; and SIGTERM ends such a process under the same
 * hostile load within its drain window.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { startAppProcess, type AppProcess } from "../helpers/app-process";
import { startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { buyerBalance, callCompletions, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;

let app: AppProcess;
let reference: ReferenceUpstream;
let canned: CannedUpstream;
beforeAll(async () => {
  [app, reference, canned] = await Promise.all([startAppProcess(), startReferenceUpstream(), startCannedUpstream()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([app.kill(), reference.stop(), canned.stop()]);
});

/** `depth` arrays nested in one another, as text. */
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

type Answer = { status: number; code: string | null; error: Record<string, unknown> | null; ms: number };

async function post(base: string, path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  const text = await res.text();
  const ms = performance.now() - started;
  const error = res.ok ? null : ((JSON.parse(text) as { error: Record<string, unknown> }).error ?? null);
  return { status: res.status, code: (error?.code as string | undefined) ?? null, error, ms };
}

/**
 * Runs `hostile` while GET /healthz is polled back to back; returns what it returned and each poll's latency. The
 * polls are what every other client of the instance waits: a request that held the event loop stalled them all.
 */
async function withHealthPolled<T>(base: string, hostile: () => Promise<T>): Promise<{ result: T; healthMs: number[] }> {
  const healthMs: number[] = [];
  let done = false;
  const poller = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      healthMs.push(performance.now() - started);
    }
  })();
  try {
    return { result: await hostile(), healthMs };
  } finally {
    done = true;
    await poller;
  }
}

/** Sends each body `times` times, one after the other, the bodies at once. */
async function repeatedly(times: number, ...sends: (() => Promise<Answer>)[]): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < times; i++) answers.push(...(await Promise.all(sends.map((send) => send()))));
  return answers;
}

const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)];

/**
 * Prompt: half the answers within 100 ms and none beyond a second (the bug took seconds each, and stalled every other
 * request as long). The median carries the 100 ms: on a machine shared with other work one answer may wait its turn.
 */
function expectPrompt(ms: number[]) {
  expect(median(ms)).toBeLessThan(100);
  expect(Math.max(...ms)).toBeLessThan(1_000);
}

/** The hostile bodies, sent `times` times while /healthz is polled, after a few sent to warm the routes up. */
async function measure(times: number, ...sends: (() => Promise<Answer>)[]) {
  await repeatedly(3, ...sends);
  const { result, healthMs } = await withHealthPolled(app.url, () => repeatedly(times, ...sends));
  expectPrompt(result.map((a) => a.ms));
  expectPrompt(healthMs);
  return result;
}

describe("a body nested deeper than MAX_JSON_DEPTH", () => {
  it("is refused 400 json_too_deep in < 100 ms on POST /auth/verify (24,000 arrays, 47 KB, no credentials), /healthz unaffected", async () => {
    const body = nested(24_000);
    for (const answer of await measure(10, () => post(app.url, "/auth/verify", body))) {
      expect(answer).toMatchObject({
        status: 400,
        code: "json_too_deep",
        error: { limit_depth: env.MAX_JSON_DEPTH, type: "invalid_request_error" },
      });
    }
  });

  it("is refused the same way on the Bearer routes (800 KB of it), /healthz unaffected, nothing reserved", async () => {
    const buyer = await seedBuyer(ONE_USDC);
    const auth = { authorization: `Bearer ${buyer.key}` };
    const deep = nested(400_000);
    const responses = `{"model":"m","input":[{"type":"reasoning","summary":${deep}}]}`;
    const chat = `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":${deep}}`;
    const answers = await measure(
      5,
      () => post(app.url, "/v1/responses", responses, auth),
      () => post(app.url, "/v1/chat/completions", chat, auth),
    );
    for (const answer of answers) expect(answer).toMatchObject({ status: 400, code: "json_too_deep" });
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC, held: 0n });
  });

  it("is served at the limit: a tool schema nested 32 levels (the most a schema may) in a body as deep as it gets", async () => {
    const buyer = await seedBuyer(ONE_USDC);
    const model = await seedPrivateModel({ supportsTools: true });
    await seedOffer({
      models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
      priceCents: 100,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: reference.url,
      upstreamApiKey: reference.apiKey,
      features: { tools: true },
    });
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 1; i < 32; i++) schema = { type: "array", items: schema };
    const body = JSON.stringify({
      model: model.id,
      max_tokens: 16,
      messages: [{ role: "user", content: "hi" }],
      tools: [{ type: "function", function: { name: "deep", parameters: schema } }],
    });
    expect(await post(app.url, "/v1/chat/completions", body, { authorization: `Bearer ${buyer.key}` })).toMatchObject({ status: 200 });
  });
});

describe("a wide body within the byte limit", () => {
  it("of more values than MAX_JSON_VALUES is refused 400 json_too_many_values in < 100 ms, /healthz unaffected", async () => {
    const buyer = await seedBuyer(ONE_USDC);
    const zeros = `[${Array(490_000).fill("0").join(",")}]`;
    const body = `{"model":"m","input":[{"type":"reasoning","summary":${zeros}}]}`;
    expect(Buffer.byteLength(body)).toBeLessThan(env.MAX_BODY_BYTES);
    const auth = { authorization: `Bearer ${buyer.key}` };
    const answers = await measure(
      5,
      () => post(app.url, "/v1/responses", body, auth),
      () => post(app.url, "/auth/verify", zeros),
    );
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 400, code: "json_too_many_values", error: { limit_values: env.MAX_JSON_VALUES } });
    }
  });

  it("of 60,000 unknown fields is refused 400 unknown_field naming ten of them, not a megabyte of names", async () => {
    const body = JSON.stringify(Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`field${i}`, 0])));
    expect(Buffer.byteLength(body)).toBeLessThan(env.MAX_BODY_BYTES);
    const answer = await post(app.url, "/auth/verify", body);
    expect(answer).toMatchObject({ status: 400, code: "unknown_field", error: { param: "field0" } });
    expect(String(answer.error?.message)).toMatch(/"field9" and 59990 more\.$/);
  });

  it("within the limits is served: an agent's 1,000 items, and 150,000 values of reasoning sent back", async () => {
    const buyer = await seedBuyer(ONE_USDC);
    const model = await seedPrivateModel();
    await seedOffer({
      models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
      priceCents: 100,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: reference.url,
      upstreamApiKey: reference.apiKey,
    });
    const auth = { authorization: `Bearer ${buyer.key}` };
    const items = Array.from({ length: 1_000 }, (_, i) =>
      i % 2 === 0
        ? { role: "user", content: `question ${i}` }
        : { type: "message", role: "assistant", content: [{ type: "output_text", text: `answer ${i}` }] },
    );
    const agent = await post(app.url, "/v1/responses", JSON.stringify({ model: model.id, max_output_tokens: 16, input: items }), auth);
    expect(agent).toMatchObject({ status: 200 });

    const reasoning = Array.from({ length: 999 }, () => ({ type: "reasoning", summary: Array(150).fill(0) }));
    const body = JSON.stringify({ model: model.id, max_output_tokens: 16, input: [...reasoning, { role: "user", content: "hi" }] });
    expect(await post(app.url, "/v1/responses", body, auth)).toMatchObject({ status: 200 });
    expect((await buyerBalance(buyer.id)).held).toBe(0n);
    expect(await db.completion.count({ where: { apiKeyId: buyer.apiKeyId } })).toBe(2);
  });
});

describe("a supplier's reply nested deeper than MAX_JSON_DEPTH", () => {
  /** A chat completion whose first choice carries `field` as raw JSON text (what JSON.stringify could not write). */
  const reply = (field: string) =>
    `{"id":"x","object":"chat.completion","created":1,"model":"canned-model","choices":[{"index":0,${field},"finish_reason":"stop"}],` +
    `"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`;

  it.each([
    ["its logprobs", reply(`"message":{"role":"assistant","content":"hi"},"logprobs":{"content":${nested(100_000)}}`)],
    [
      "a tool call's arguments sent as an object",
      reply(
        `"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":${nested(100_000)}}}}]}`,
      ),
    ],
  ])("in %s is not a chat completion: 502 upstream_error, nothing charged, counted against the offer", async (_where, text) => {
    const model = await seedPrivateModel({ supportsTools: true });
    const offer = await seedOffer({
      models: [{ id: model.id, upstreamModel: "canned-model" }],
      priceCents: 100,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: canned.url,
      upstreamApiKey: canned.apiKey,
    });
    const buyer = await seedBuyer(ONE_USDC);
    canned.answer({ status: 200, body: text });
    const res = await callCompletions(buyer.key, { model: model.id, messages: [{ role: "user", content: "hi" }], max_tokens: 10 });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_error");
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC, held: 0n });
    expect((await db.offer.findUniqueOrThrow({ where: { id: offer.id } })).consecutiveFailures).toBe(1);
  });
});

describe("SIGTERM under hostile bodies", () => {
  it("ends the instance within its drain window while deep and wide bodies keep arriving", async () => {
    const graceMs = 2_000;
    const victim = await startAppProcess({ SVC_TEST_EXIT_ON_SIGTERM: "1", SHUTDOWN_GRACE_MS: String(graceMs) });
    const buyer = await seedBuyer(ONE_USDC);
    const auth = { authorization: `Bearer ${buyer.key}` };
    const bodies: [string, string, Record<string, string>][] = [
      ["/auth/verify", nested(500_000), {}],
      ["/v1/responses", `{"model":"m","input":[{"type":"reasoning","summary":${nested(400_000)}}]}`, auth],
      ["/v1/chat/completions", `{"model":"m","messages":${nested(400_000)}}`, auth],
      ["/auth/verify", `[${Array(490_000).fill("0").join(",")}]`, {}],
    ];
    let stopping = false;
    let answered = 0;
    const senders = bodies.map(async ([path, body, headers]) => {
      while (!stopping) {
        const res = await fetch(`${victim.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body,
        }).catch(() => null);
        if (!res) return;
        await res.arrayBuffer().catch(() => undefined);
        answered++;
      }
    });
    try {
      // Under way: a few of them answered (or, when each holds the instance, 10 s spent trying).
      const deadline = performance.now() + 10_000;
      while (answered < 8 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      const signalled = performance.now();
      const exited = new Promise<number | null>((resolve) => victim.child.once("exit", (code) => resolve(code)));
      victim.child.kill("SIGTERM");
      const code = await Promise.race([
        exited,
        new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), graceMs + 3_000)),
      ]);
      expect(code).toBe(0);
      expect(performance.now() - signalled).toBeLessThan(graceMs);
    } finally {
      stopping = true;
      await victim.kill("SIGKILL");
      await Promise.all(senders);
    }
  }, 60_000);
});
