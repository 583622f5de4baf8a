/**
 * The checks every body and query passes (lib/http/body.ts parseInput): linear in the input whatever its shape, so a
 * chain of nested arrays costs what its bytes cost, and a problem deep inside is still named by its path.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError } from "@/lib/errors";
import { parseInput } from "@/lib/http/body";

/** `depth` arrays nested in one another, the innermost holding `inner`. */
function nested(depth: number, inner: unknown): unknown {
  let value = inner;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

describe("parseInput's checks over every string and key", () => {
  it("take linear time on 50,000 nested arrays (seconds when the path was copied at every level) and name a NUL at the bottom", () => {
    const depth = 50_000;
    const started = performance.now();
    const error = refusal(() => parseInput(z.unknown(), { deep: nested(depth, "a\u0000b") }, "body"));
    const ms = performance.now() - started;
    expect(error.code).toBe("invalid_request");
    expect(error.details?.param).toBe(`deep.${Array(depth).fill("0").join(".")}`);
    expect(ms).toBeLessThan(1_000);
  });

  it("name a lone surrogate in a key and an amount beyond 64 bits by their paths", () => {
    expect(refusal(() => parseInput(z.unknown(), { a: [{ ["k\ud800"]: 1 }] }, "body")).details?.param).toBe("a.0.k\ud800");
    const Amount = z.object({ list: z.array(z.string().transform((s) => BigInt(s))) });
    const error = refusal(() => parseInput(Amount, { list: ["1", (2n ** 63n).toString()] }, "body"));
    expect(error).toMatchObject({ code: "amount_out_of_range", details: { param: "list.1" } });
  });

  it("name at most ten unknown fields, however many were sent", () => {
    const body = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 0]));
    const error = refusal(() => parseInput(z.strictObject({}), body, "body"));
    expect(error.code).toBe("unknown_field");
    expect(error.message).toBe(`Unknown fields in body: ${[...Array(10).keys()].map((i) => `"k${i}"`).join(", ")} and 49990 more.`);
    expect(error.details?.param).toBe("k0");
  });
});
