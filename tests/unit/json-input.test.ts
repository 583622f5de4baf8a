/**
 * What a JSON body can cost: the scan that bounds its depth and value count before it is parsed (lib/json-limits.ts),
 * against the same figures taken from JSON.parse's result over random JSON, and the checks every body and query then
 * passes (lib/http/body.ts parseInput), linear in the input whatever its shape, a problem deep inside still named by its path.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError } from "@/lib/errors";
import { parseInput } from "@/lib/http/body";
import { exceededJsonLimit } from "@/lib/json-limits";
import { prng, type Rng } from "../helpers/prng";

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
    expect(ms).toBeLessThan(5_000);
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

/** Depth and value count of a parsed value, the slow obvious way. */
function measured(value: unknown, depth = 0): { depth: number; values: number } {
  if (value === null || typeof value !== "object") return { depth, values: 1 };
  const inner = (Array.isArray(value) ? value : Object.values(value)).map((v) => measured(v, depth + 1));
  return { depth: Math.max(depth + 1, ...inner.map((m) => m.depth)), values: 1 + inner.reduce((n, m) => n + m.values, 0) };
}

/** Random JSON text: nesting, keys and strings full of brackets, quotes, backslashes and colons, numbers, literals, spaces. */
function randomJson(rng: Rng, depth = 0): string {
  const space = () => rng.pick(["", " ", "\n", "\t ", "\r\n"]);
  const text = () =>
    JSON.stringify(
      Array.from({ length: rng.int(0, 6) }, () => rng.pick(["[", "]", "{", "}", '"', "\\", ":", ",", "a", "é", "\u0001", "😀"])).join(""),
    );
  const kind = depth >= 12 ? rng.int(0, 2) : rng.int(0, 4);
  if (kind === 0) return text();
  if (kind === 1) return rng.pick(["0", "-1.5e3", "true", "false", "null", "123456"]);
  if (kind === 2) return rng.pick(["[]", "{}"]);
  const n = rng.int(0, 4);
  if (kind === 3) return `[${Array.from({ length: n }, () => space() + randomJson(rng, depth + 1) + space()).join(",")}]`;
  return `{${Array.from({ length: n }, (_, i) => `${space()}${text().slice(0, -1)}${i}"${space()}:${space()}${randomJson(rng, depth + 1)}`).join(",")}}`;
}

describe("the scan of a JSON text's depth and values", () => {
  it("agrees with JSON.parse's result on random JSON: refuses one level or one value fewer than it has, accepts exactly it", () => {
    const seed = Date.now();
    const rng = prng(seed);
    for (let i = 0; i < 2_000; i++) {
      const text = randomJson(rng);
      const { depth, values } = measured(JSON.parse(text));
      const context = `seed ${seed}, case ${i}: ${text}`;
      expect(exceededJsonLimit(text, { maxDepth: depth, maxValues: values }), context).toBeNull();
      if (depth > 0)
        expect(exceededJsonLimit(text, { maxDepth: depth - 1, maxValues: values }), context).toEqual({ limit: "depth", max: depth - 1 });
      expect(exceededJsonLimit(text, { maxDepth: depth, maxValues: values - 1 }), context).toEqual({ limit: "values", max: values - 1 });
    }
  });

  it("is linear: a megabyte of nesting, of values, of escapes or of one string each takes milliseconds", () => {
    const limits = { maxDepth: 1e9, maxValues: 1e9 };
    for (const text of [
      nestedText(500_000),
      `[${Array(500_000).fill("0").join(",")}]`,
      `"${'\\"'.repeat(500_000)}"`,
      `"${"x".repeat(1_000_000)}"`,
    ]) {
      const started = performance.now();
      expect(exceededJsonLimit(text, limits)).toBeNull();
      expect(performance.now() - started).toBeLessThan(500);
    }
  });
});

function nestedText(depth: number): string {
  return `${"[".repeat(depth)}${"]".repeat(depth)}`;
}
