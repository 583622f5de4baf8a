import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseUpstreamAnswer, upstreamErrorCode, upstreamErrorMessage, type UpstreamAnswer } from "@/lib/upstream/answer";
import { classifyUpstreamStatus, type ForwardFailureCause } from "@/lib/router/upstream-failure";

/**
 * Recorded provider replies (tests/fixtures/providers/, one file per reply, its source in the folder's README):
 * each is read the way the router reads a forwarded call's answer, and must come out as recorded beside it.
 */

const DIR = new URL("../fixtures/providers/", import.meta.url);
const files = readdirSync(DIR).sort();
const read = (name: string) => readFileSync(new URL(name, DIR), "utf8");

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
  const replies = files.filter((name) => name.endsWith(".json"));

  it.each(replies)("%s reads as recorded", (name) => {
    const fixture = JSON.parse(read(name)) as Fixture;
    expect(typeof fixture.description).toBe("string");
    expect((fixture.body === undefined) !== (fixture.text === undefined), "exactly one of body and text").toBe(true);
    expect(outcome(fixture.status, bodyJson(fixture))).toEqual(fixture.expect);
  });

  it("streamed transcripts (for the streaming parser to come) have only JSON or [DONE] data lines", () => {
    const transcripts = files.filter((name) => name.endsWith(".sse"));
    expect(transcripts.length).toBeGreaterThan(0);
    for (const name of transcripts) {
      for (const line of read(name).split("\n")) {
        if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
        expect(() => JSON.parse(line.slice("data: ".length)), `${name}: ${line}`).not.toThrow();
      }
    }
  });

  it("the README names every fixture, with its source, and no missing one", () => {
    const named = [...read("README.md").matchAll(/^\| `([a-z0-9.-]+\.(?:json|sse))` \|/gm)].map((m) => m[1]);
    expect(named.sort()).toEqual(files.filter((name) => name !== "README.md"));
  });
});
