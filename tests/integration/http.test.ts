import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GET as catchAll, POST as catchAllPost } from "@/app/v1/[...path]/route";
import { AppError } from "@/lib/errors";
import { ERROR_STATUS } from "@/lib/http/errors";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import type { OperationDocs } from "@/lib/http/route-types";
import { jsonRequest, readError, routeParams } from "../helpers/http";

const TEST_DOCS: OperationDocs = { operationId: "test", tag: "Operations", summary: "A route made for this test", responses: [] };

const echo = route(
  {
    auth: "public",
    body: z.strictObject({ name: z.string().min(1), amount: z.string().optional() }),
    query: z.strictObject({ verbose: z.enum(["0", "1"]).optional() }),
    maxBodyBytes: 256,
    docs: TEST_DOCS,
  },
  ({ body, query }) => ok({ body, query }),
);

describe("route(): input validation and the error shape", () => {
  it("parses a valid body and query", async () => {
    const res = await echo(jsonRequest("POST", "/echo?verbose=1", { name: "a" }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ body: { name: "a" }, query: { verbose: "1" } });
  });

  it("rejects malformed JSON with a 400 that says so", async () => {
    const res = await echo(jsonRequest("POST", "/echo", '{"name": "a",'));
    expect(res.status).toBe(400);
    const error = await readError(res);
    expect(error).toMatchObject({ code: "invalid_json", type: "invalid_request_error" });
    expect(error.message).toMatch(/not valid JSON/);
  });

  it("rejects an empty body", async () => {
    const res = await echo(jsonRequest("POST", "/echo", ""));
    expect(res.status).toBe(400);
    expect((await readError(res)).code).toBe("invalid_json");
  });

  it("rejects a wrong or missing content type", async () => {
    const form = new Request("http://localhost:3000/echo", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "name=a",
    });
    const res = await echo(form);
    expect(res.status).toBe(400);
    const error = await readError(res);
    expect(error.code).toBe("unsupported_content_type");
    expect(error.message).toContain("application/x-www-form-urlencoded");

    const bare = await echo(new Request("http://localhost:3000/echo", { method: "POST", body: '{"name":"a"}' }));
    expect(bare.status).toBe(400);
  });

  it("names unknown fields", async () => {
    const res = await echo(jsonRequest("POST", "/echo", { name: "a", colour: "red" }));
    expect(res.status).toBe(400);
    const error = await readError(res);
    expect(error.code).toBe("unknown_field");
    expect(error.message).toContain('"colour"');
  });

  it("names the invalid field and what is wrong with it", async () => {
    const res = await echo(jsonRequest("POST", "/echo", { name: 42 }));
    expect(res.status).toBe(400);
    const error = await readError(res);
    expect(error.code).toBe("invalid_request");
    expect(error.message).toMatch(/^Invalid request body: name: /);
  });

  it("validates the query string too", async () => {
    const res = await echo(jsonRequest("POST", "/echo?verbose=yes", { name: "a" }));
    expect(res.status).toBe(400);
    expect((await readError(res)).message).toMatch(/^Invalid query: verbose/);
    const unknown = await echo(jsonRequest("POST", "/echo?debug=1", { name: "a" }));
    expect((await readError(unknown)).code).toBe("unknown_field");
  });

  it("answers 413 for a body over the limit, declared or streamed", async () => {
    const big = { name: "x".repeat(1000) };
    const res = await echo(jsonRequest("POST", "/echo", big));
    expect(res.status).toBe(413);
    expect((await readError(res)).code).toBe("payload_too_large");

    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(JSON.stringify(big)));
        controller.close();
      },
    });
    const undeclared = new Request("http://localhost:3000/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect((await echo(undeclared)).status).toBe(413);
  });

  it("gives every response a request id, echoing a sane incoming one", async () => {
    const generated = await echo(jsonRequest("POST", "/echo", { name: "a" }));
    expect(generated.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{24}$/);
    const echoed = await echo(jsonRequest("POST", "/echo", "{", { "x-request-id": "trace-123" }));
    expect(echoed.headers.get("x-request-id")).toBe("trace-123");
    const hostile = await echo(jsonRequest("POST", "/echo", { name: "a" }, { "x-request-id": "a b c" }));
    expect(hostile.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("renders AppError with its status, details and headers, and hides unknown errors behind a 500", async () => {
    const failing = route({ auth: "public", docs: TEST_DOCS }, () => {
      throw new AppError("insufficient_balance", "Top up first.", { details: { needed: "1.000000" }, headers: { "x-a": "1" } });
    });
    const res = await failing(jsonRequest("GET", "/x"));
    expect(res.status).toBe(402);
    expect(res.headers.get("x-a")).toBe("1");
    expect(await res.json()).toEqual({
      error: { message: "Top up first.", type: "payment_required", code: "insufficient_balance", needed: "1.000000" },
    });

    const crashing = route({ auth: "public", docs: TEST_DOCS }, () => {
      throw new Error("secret internals");
    });
    const crash = await crashing(jsonRequest("GET", "/x"));
    expect(crash.status).toBe(500);
    const error = await readError(crash);
    expect(error.code).toBe("internal_error");
    expect(error.message).not.toContain("secret internals");
    expect(error.message).toContain(crash.headers.get("x-request-id")!);
  });

  it("maps every error code to a real HTTP error status", () => {
    for (const status of Object.values(ERROR_STATUS)) expect(status).toBeGreaterThanOrEqual(400);
  });
});

describe("unknown /v1 routes", () => {
  it("answer a JSON 404 in the error shape for any method", async () => {
    for (const handler of [catchAll, catchAllPost]) {
      const res = await handler(jsonRequest("GET", "/v1/nope"), routeParams({ path: ["nope"] }));
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(await readError(res)).toMatchObject({ code: "not_found", type: "invalid_request_error" });
    }
  });
});
