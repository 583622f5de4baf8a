import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseUpstreamAnswer, upstreamErrorCode, upstreamErrorMessage, type UpstreamAnswer } from "@/lib/upstream/answer";
import { bodyFormat } from "@/lib/upstream/client";
import { ChatStream, type StreamEvent, type StreamFailure } from "@/lib/upstream/stream-answer";
import { classifyUpstreamStatus, type ForwardFailureCause } from "@/lib/router/upstream-failure";

/**
 * Recorded provider replies (tests/fixtures/providers/, one file per reply, its source in the folder's README):
 * each is read the way the router reads a forwarded call's answer, and must come out as recorded beside it.
 */

const DIR = new URL("../fixtures/providers/", import.meta.url);
const EXPECTED = ".expected.json";
const files = readdirSync(DIR).sort();
const read = (name: string) => readFileSync(new URL(name, DIR), "utf8");
const readBytes = (name: string) => new Uint8Array(readFileSync(new URL(name, DIR)));

type Expected =
  | { outcome: "answer"; answer: UpstreamAnswer }
  | { outcome: "rejected_request"; upstreamMessage: string | null; upstreamCode: string | null }
  | { outcome: "failure"; reason: string; cause: ForwardFailureCause; upstreamMessage: string | null; upstreamCode: string | null };

/** One reply: its status, its body as JSON (`body`) or as the raw text the upstream sent (`text`), and the outcome. */
type Fixture = { description: string; status: number; headers?: Record<string, string>; body?: unknown; text?: string; expect: Expected };

/** The statuses lib/router/complete.ts (forwardOnce) hands back as the buyer's own request to change. */
const REQUEST_REJECTED_STATUSES = new Set([400, 413, 422]);

/** The body as lib/upstream/client.ts gives it: parsed JSON, or null when the text is not JSON. */
function bodyJson(fixture: Fixture): unknown {
  try {
    return JSON.parse(fixture.text ?? JSON.stringify(fixture.body)) as unknown;
  } catch {
    return null;
  }
}

/** What the router makes of an HTTP answer, in forwardOnce's order: a usable answer, the buyer's rejected request, or a failure. */
function outcome(status: number, json: unknown): Expected {
  const answer = status === 200 ? parseUpstreamAnswer(json) : null;
  if (answer) return { outcome: "answer", answer };
  const said = { upstreamMessage: upstreamErrorMessage(json), upstreamCode: upstreamErrorCode(json) };
  if (REQUEST_REJECTED_STATUSES.has(status)) return { outcome: "rejected_request", ...said };
  return { outcome: "failure", ...classifyUpstreamStatus(status, json), ...said };
}

describe("recorded provider replies", () => {
  const replies = files.filter((name) => name.endsWith(".json") && !name.endsWith(EXPECTED));

  it.each(replies)("%s reads as recorded", (name) => {
    const fixture = JSON.parse(read(name)) as Fixture;
    expect(typeof fixture.description).toBe("string");
    expect((fixture.body === undefined) !== (fixture.text === undefined), "exactly one of body and text").toBe(true);
    expect(outcome(fixture.status, bodyJson(fixture))).toEqual(fixture.expect);
  });

  it("the README names every fixture, with its source, and no missing one", () => {
    const named = [...read("README.md").matchAll(/^\| `([a-z0-9.-]+\.(?:json|sse))` \|/gm)].map((m) => m[1]);
    expect(named.sort()).toEqual(files.filter((name) => name !== "README.md" && !name.endsWith(EXPECTED)));
    // Every transcript has its expected outcome beside it, and every expected outcome its transcript.
    const transcripts = files.filter((name) => name.endsWith(".sse"));
    expect(files.filter((name) => name.endsWith(EXPECTED))).toEqual(transcripts.map((name) => name.replace(/\.sse$/, EXPECTED)).sort());
  });
});

/**
 * A transcript's expected outcome (`<name>.expected.json` beside it): the answer its stream assembles (and whether it
 * ended on [DONE]), the failure and what had arrived before it, or (a body labelled JSON) the answer read as JSON.
 */
type StreamExpected =
  | { outcome: "answer"; sawDone: boolean; answer: UpstreamAnswer }
  | { outcome: "failure"; failure: StreamFailure; partial: UpstreamAnswer }
  | { outcome: "json"; contentType: string; answer: UpstreamAnswer };

/** Reads a body cut into these pieces, as the router will: every event it yields, then how it ended. */
function readStream(pieces: Uint8Array[]) {
  const stream = new ChatStream();
  const events: StreamEvent[] = [];
  for (const piece of pieces) events.push(...stream.push(piece));
  const outcome = stream.end();
  return { events, outcome };
}

/** An answer as a JSON chat completion says it (what answer.ts reads): a streamed answer must read the same way. */
function asCompletion(answer: UpstreamAnswer): unknown {
  const usage = answer.usage && {
    prompt_tokens: answer.usage.promptTokens,
    completion_tokens: answer.usage.completionTokens,
    ...(answer.usage.cachedTokens !== null && { prompt_tokens_details: { cached_tokens: answer.usage.cachedTokens } }),
    ...(answer.usage.reasoningTokens !== null && { completion_tokens_details: { reasoning_tokens: answer.usage.reasoningTokens } }),
  };
  return {
    object: "chat.completion",
    choices: [{ index: 0, message: answer.message, finish_reason: answer.finishReason, logprobs: answer.logprobs }],
    system_fingerprint: answer.systemFingerprint,
    usage,
  };
}

describe("recorded provider streams", () => {
  const transcripts = files.filter((name) => name.endsWith(".sse"));

  it.each(transcripts)("%s reads as recorded, cut anywhere", (name) => {
    const expected = JSON.parse(read(name.replace(/\.sse$/, EXPECTED))) as StreamExpected;
    const bytes = readBytes(name);
    if (expected.outcome === "json") {
      expect(bodyFormat(expected.contentType)).toBe("json");
      expect(parseUpstreamAnswer(JSON.parse(read(name)))).toEqual(expected.answer);
      return;
    }
    const whole = readStream([bytes]);
    expect(whole.outcome).toEqual(
      expected.outcome === "answer"
        ? { ok: true, answer: expected.answer, sawDone: expected.sawDone }
        : { ok: false, failure: expected.failure, partial: expected.partial },
    );
    if (expected.outcome === "answer") expect(parseUpstreamAnswer(asCompletion(expected.answer))).toEqual(expected.answer);

    // The same events and outcome wherever the socket cut the bytes: at every byte, and one byte at a time.
    for (let cut = 0; cut <= bytes.length; cut++) {
      const split = readStream([bytes.subarray(0, cut), bytes.subarray(cut)]);
      if (!isEqual(split, whole)) expect(split, `cut at byte ${cut}`).toEqual(whole);
    }
    expect(readStream([...bytes].map((byte) => Uint8Array.of(byte)))).toEqual(whole);
  });
});

/** A deep comparison cheap enough to run at every cut (expect() only when it fails, for its diff). */
function isEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
