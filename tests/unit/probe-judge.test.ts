import { describe, expect, it } from "vitest";
import { generateProbeSet, probeRequest, type ProbeDefinition } from "@/lib/probes/catalog";
import { judgeAnswer, judgeHttpFailure, modelMatches, normalizeText, schemaViolation } from "@/lib/probes/judge";
import type { UpstreamAnswer } from "@/lib/upstream/answer";

/** Probes of the shapes the catalog generates, fixed here so each check has a known right answer. */
const PROBES: ProbeDefinition[] = [
  { name: "capital", kind: "text", compare: true, messages: [{ role: "user", content: "What is the capital of France?" }] },
  {
    name: "echo",
    kind: "text",
    compare: false,
    stop: ["###"],
    expect: "KX7Q-29MB",
    messages: [{ role: "user", content: "Repeat this code exactly: KX7Q-29MB" }],
  },
  { name: "limit", kind: "limit", compare: false, maxTokens: 20, messages: [{ role: "user", content: "Write an essay." }] },
  {
    name: "json",
    kind: "json_schema",
    compare: true,
    messages: [{ role: "user", content: "6 times 7 as JSON" }],
    schema: { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"], additionalProperties: false },
  },
  {
    name: "tool",
    kind: "tool",
    compare: true,
    messages: [{ role: "user", content: "Call get_weather for Paris, in celsius." }],
    schema: {
      type: "object",
      properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
      required: ["city", "unit"],
      additionalProperties: false,
    },
    toolName: "get_weather",
  },
];
const probe = (name: string) => PROBES.find((p) => p.name === name)!;
const answer = (content: string | null, extra: Partial<UpstreamAnswer> = {}): UpstreamAnswer => ({
  message: { role: "assistant", content },
  finishReason: "stop",
  logprobs: null,
  systemFingerprint: null,
  usage: null,
  ...extra,
});

describe("judging a probe's answer", () => {
  it("accepts the mapped model or a dated snapshot of it, and nothing else", () => {
    expect(modelMatches("gpt-4o", "gpt-4o")).toBe(true);
    expect(modelMatches("gpt-4o", "GPT-4o-2024-08-06")).toBe(true);
    expect(modelMatches("mistral-large", "mistral-large-2407")).toBe(true);
    expect(modelMatches("claude-3-5-sonnet", "claude-3-5-sonnet-20240620")).toBe(true);
    expect(modelMatches("gpt-4o", "gpt-4o-mini")).toBe(false);
    expect(modelMatches("gpt-4o", "gpt-4o-mini-2024-07-18")).toBe(false);
    expect(modelMatches("llama-3.3-70b", "qwen3-235b")).toBe(false);
    expect(modelMatches("gpt-4o", null)).toBe(false);
  });

  it("compares one-word answers by what they say, not their case or punctuation", () => {
    expect(normalizeText(" **Paris.** ")).toBe("paris");
    expect(normalizeText('"Cold"\n')).toBe("cold");
    expect(normalizeText("42")).not.toBe(normalizeText("41"));
  });

  it("finds truncation, broken schemas and tool calls, and a wrong model, with bounded evidence", () => {
    expect(judgeAnswer(probe("capital"), "m", "m", answer("Paris")).failures).toEqual([]);
    expect(judgeAnswer(probe("capital"), "m", "m", answer("Par", { finishReason: "length" })).failures.map((f) => f.check)).toEqual([
      "truncated",
    ]);
    expect(judgeAnswer(probe("capital"), "m", "m", answer("")).failures.map((f) => f.check)).toEqual(["truncated"]);
    expect(judgeAnswer(probe("json"), "m", "m", answer('{"answer":42}')).failures).toEqual([]);
    expect(judgeAnswer(probe("json"), "m", "m", answer('{"answer":"42"}')).failures.map((f) => f.check)).toEqual(["json_schema"]);
    expect(judgeAnswer(probe("json"), "m", "m", answer("forty-two")).failures.map((f) => f.check)).toEqual(["json_schema"]);
    const call = (args: string) => ({ id: "c", type: "function" as const, function: { name: "get_weather", arguments: args } });
    const tool = (args: string) =>
      answer(null, { message: { role: "assistant", content: null, tool_calls: [call(args)] }, finishReason: "tool_calls" });
    expect(judgeAnswer(probe("tool"), "m", "m", tool('{"city":"Paris","unit":"celsius"}')).failures).toEqual([]);
    expect(judgeAnswer(probe("tool"), "m", "m", tool('{"city":"Paris","unit":"kelvin"}')).failures.map((f) => f.check)).toEqual([
      "tool_schema",
    ]);
    expect(judgeAnswer(probe("tool"), "m", "m", answer("It is sunny")).failures.map((f) => f.check)).toEqual(["tool_schema"]);
    const wrong = judgeAnswer(probe("capital"), "m", "other", answer("x".repeat(10_000)));
    expect(wrong.failures).toEqual([{ check: "model", expected: "m", got: "other" }]);
    expect(wrong.answer!.length).toBeLessThanOrEqual(500);
    expect(judgeAnswer(probe("json"), "m", "m", answer("y".repeat(10_000))).failures[0].got!.length).toBeLessThanOrEqual(320);
  });

  it("fails an answer nested deeper than a request may be, wherever it stands, without walking it", () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const call = (args: string) => ({ id: "c", type: "function" as const, function: { name: "get_weather", arguments: args } });
    const tool = answer(null, {
      message: { role: "assistant", content: null, tool_calls: [call(`{"city":"Paris","unit":${deep}}`)] },
      finishReason: "tool_calls",
    });
    const failures = [
      judgeAnswer(probe("tool"), "m", "m", tool).failures,
      judgeAnswer(probe("json"), "m", "m", answer(`{"answer":${deep}}`)).failures,
    ];
    expect(failures.map((f) => f.map((x) => x.check))).toEqual([["tool_schema"], ["json_schema"]]);
    expect(failures[0][0].got).toMatch(/^the arguments are nested deeper than 64 levels/);
  });

  it("checks an echo's code, the stop sequences sent, and the limit probe's max_tokens by svc's own count", () => {
    const checks = (name: string, content: string, finishReason: UpstreamAnswer["finishReason"] = "stop") =>
      judgeAnswer(probe(name), "m", "m", answer(content, { finishReason })).failures.map((f) => f.check);
    expect(checks("echo", "Sure: kx7q 29mb")).toEqual([]);
    expect(checks("echo", "KX7Q-29MC")).toEqual(["answer"]);
    expect(checks("echo", "KX7Q-29MB ### and more")).toEqual(["stop"]);
    expect(checks("limit", "word ".repeat(20), "length")).toEqual([]);
    expect(checks("limit", "word ".repeat(200), "length")).toEqual(["max_tokens"]);
  });

  it("draws a fresh, buyer-shaped probe set per key: no seed, no fixed parameters, no fixed prompt", () => {
    const sets = Array.from({ length: 40 }, (_, i) => generateProbeSet(`round-${i}\nmodel`, { billsReasoning: false }));
    expect(generateProbeSet("round-0\nmodel", { billsReasoning: false })).toEqual(sets[0]);
    expect(sets[0].map((p) => p.name)).toEqual(["echo", "chat", "limit", "json", "tool"]);
    expect(generateProbeSet("r\nm", { billsReasoning: true }).map((p) => p.name)).toEqual(["echo", "chat", "json", "tool"]);
    const requests = sets.flatMap((set) => set.map((p) => probeRequest(p, "m")));
    for (const r of requests) expect(r).not.toHaveProperty("seed");
    expect(Object.keys(requests[0]).slice(0, 4)).toEqual(["model", "max_tokens", "stream", "messages"]);
    const prompts = new Set(requests.map((r) => JSON.stringify(r.messages)));
    expect(prompts.size).toBeGreaterThan(requests.length * 0.95);
    expect(new Set(requests.map((r) => r.max_tokens)).size).toBeGreaterThan(5);
    expect(new Set(requests.map((r) => ("temperature" in r ? r.temperature : undefined))).size).toBeGreaterThan(4);
    // Every echo probe's code is in its own prompt, so svc knows the right answer.
    for (const p of sets.flat().filter((p) => p.expect)) expect(JSON.stringify(p.messages)).toContain(p.expect);
  });

  it("leaves outages to health and fails refusals and unusable answers", () => {
    for (const status of [500, 502, 503, 429, 401, 403, 408]) expect(judgeHttpFailure(status, "down")).toBeNull();
    for (const status of [200, 400, 404, 422]) expect(judgeHttpFailure(status, "nope")?.check).toBe("error");
  });

  it("checks the probes' own schemas", () => {
    const schema = probe("tool").schema!;
    expect(schemaViolation(schema, { city: "Paris", unit: "celsius" })).toBeNull();
    expect(schemaViolation(schema, { city: "Paris" })).toMatch(/unit is missing/);
    expect(schemaViolation(schema, { city: "Paris", unit: "celsius", extra: 1 })).toMatch(/extra is not allowed/);
    expect(schemaViolation(schema, [])).toMatch(/not an object/);
  });
});
