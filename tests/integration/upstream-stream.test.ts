import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newRequestContext, runInRequestContext } from "@/lib/ops/request-context";
import { postChatCompletion, streamChatCompletion, UpstreamError, type UpstreamStream } from "@/lib/upstream/client";

/**
 * The streaming call against a real HTTP server of this test's own, one behaviour per base path (the reference
 * upstream is not used: its streaming modes are someone else's work in progress).
 */

const DEV = { allowPrivate: true };
const body = { model: "m", stream: true, messages: [{ role: "user", content: "hi" }] };
const chunk = (content: string) =>
  `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] })}\n\n`;
const COMPLETION = { id: "chatcmpl-1", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "hi" } }] };

/** What the server saw of one call: its headers, and when the client's connection went away before the answer ended. */
type Seen = { headers: IncomingHttpHeaders; closedEarly: Promise<number>; written: () => number; blocked: () => boolean };
const seen = new Map<string, Seen[]>();
const gates = new Map<string, () => void>();
let server: Server;
let base: string;

function record(path: string, headers: IncomingHttpHeaders, res: ServerResponse, written: () => number, blocked: () => boolean) {
  const closedEarly = new Promise<number>((resolve) => res.on("close", () => !res.writableFinished && resolve(performance.now())));
  seen.set(path, [...(seen.get(path) ?? []), { headers, closedEarly, written, blocked }]);
}

const lastSeen = (path: string) => seen.get(path)!.at(-1)!;
const url = (path: string) => `${base}/${path}/v1`;
const sse = (res: ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url!.split("/")[1];
    let written = 0;
    let blocked = false;
    record(
      path,
      req.headers,
      res,
      () => written,
      () => blocked,
    );
    req.resume();
    const write = (text: string | Buffer) => {
      written += text.length;
      return res.write(text);
    };
    switch (path) {
      case "gated": // the first event at once, the rest when the test opens the gate
        sse(res);
        write(chunk("one"));
        gates.set(path, () => {
          write(chunk(" two"));
          write("data: [DONE]\n\n");
          res.end();
        });
        return;
      case "json":
        res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
        return res.end(JSON.stringify(COMPLETION));
      case "refused":
        res.writeHead(429, { "content-type": "application/json", "retry-after": "3" });
        return res.end(JSON.stringify({ error: { message: "slow down", type: "rate_limit_error", code: "rate_limit_exceeded" } }));
      case "silent":
        return;
      case "headers-only":
        sse(res);
        res.flushHeaders();
        return;
      case "stall":
        sse(res);
        write(chunk("one"));
        return;
      case "drip": {
        sse(res);
        const timer = setInterval(() => write(": keep-alive\n\n"), 50);
        res.on("close", () => clearInterval(timer));
        return;
      }
      case "break":
        sse(res);
        write(chunk("one"));
        setTimeout(() => res.socket!.destroy(), 50);
        return;
      case "firehose": {
        // As fast as the client takes it, waiting only when the socket's buffers are full.
        sse(res);
        const block = Buffer.from(chunk("x".repeat(16 * 1024)));
        const pump = () => {
          while (!res.destroyed) {
            if (!write(block)) {
              blocked = true;
              res.once("drain", pump);
              return;
            }
          }
        };
        pump();
        return;
      }
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function call(path: string, extra: Partial<Parameters<typeof streamChatCompletion>[0]> = {}) {
  return streamChatCompletion({ baseUrl: url(path), apiKey: "k", body, policy: DEV, ...extra });
}

async function readAll(stream: UpstreamStream): Promise<string> {
  let text = "";
  for await (const piece of stream.body) text += piece.toString("utf8");
  return text;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e as Error,
  );
  expect(error).toBeInstanceOf(Error);
  return error!;
}

/** Resolves with the time the server saw the client's connection close, or rejects after `ms`. */
function closedWithin(path: string, ms: number): Promise<number> {
  return Promise.race([
    lastSeen(path).closedEarly,
    new Promise<number>((_, reject) => setTimeout(() => reject(new Error(`the upstream never saw /${path} close`)), ms)),
  ]);
}

describe("streamChatCompletion", () => {
  it("answers with the status and headers at once, then the body as the upstream sends it, with the hop header and request id", async () => {
    const context = { ...newRequestContext(), requestId: "req_stream_test" };
    const stream = await runInRequestContext(context, () => call("gated"));
    expect(stream).toMatchObject({ status: 200, format: "event-stream" });
    expect(stream.headers["content-type"]).toBe("text/event-stream");
    const iterator = stream.body[Symbol.asyncIterator]();
    // The first event arrives while the upstream still holds the rest: nothing waits for the whole answer.
    expect((await iterator.next()).value.toString()).toBe(chunk("one"));
    gates.get("gated")!();
    let rest = "";
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest += next.value.toString();
    expect(rest).toBe(chunk(" two") + "data: [DONE]\n\n");
    expect(lastSeen("gated").headers).toMatchObject({
      "x-svc-hop": "1",
      "x-request-id": "req_stream_test",
      authorization: "Bearer k",
      accept: "text/event-stream, application/json",
    });
  });

  it("recognises an answer that is not a stream (JSON), and reads it whole as postChatCompletion does", async () => {
    const stream = await call("json");
    expect(stream.format).toBe("json");
    const answer = await stream.read();
    expect(answer).toEqual(await postChatCompletion({ baseUrl: url("json"), apiKey: "k", body, policy: DEV }));
    expect(answer.json).toEqual(COMPLETION);

    const refused = await call("refused");
    expect(refused).toMatchObject({ status: 429, format: "json" });
    expect(refused.headers["retry-after"]).toBe("3");
    expect((await refused.read()).json).toMatchObject({ error: { code: "rate_limit_exceeded" } });
  });

  it("applies the same SSRF rules: http and loopback refused in production, before anything is sent", async () => {
    const before = seen.get("gated")?.length ?? 0;
    const error = await failure(call("gated", { policy: { allowPrivate: false } }));
    expect(error).toMatchObject({ kind: "forbidden_address" });
    expect(seen.get("gated")?.length ?? 0).toBe(before);
  });

  it("says how far a failed call got: nothing listening is a failure to connect", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(streamChatCompletion({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: "k", body, policy: DEV }));
    expect(error).toMatchObject({ kind: "network", stage: "connecting", deadline: null });
  });
});

describe("a streamed call's deadlines, each its own error", () => {
  it("first byte: no answer at all, or headers and then nothing", async () => {
    const started = performance.now();
    const silent = await failure(call("silent", { deadlines: { firstByteTimeoutMs: 200 } }));
    expect(silent).toBeInstanceOf(UpstreamError);
    expect(silent).toMatchObject({ kind: "timeout", deadline: "first_byte", stage: "sent" });
    expect(performance.now() - started).toBeLessThan(2_000);
    await closedWithin("silent", 2_000);

    const headersOnly = await call("headers-only", { deadlines: { firstByteTimeoutMs: 200 } });
    expect(headersOnly.status).toBe(200);
    expect(await failure(readAll(headersOnly))).toMatchObject({ kind: "timeout", deadline: "first_byte", stage: "receiving" });
    await closedWithin("headers-only", 2_000);
  });

  it("idle: the upstream goes silent between chunks", async () => {
    const stream = await call("stall", { deadlines: { idleTimeoutMs: 200 } });
    const iterator = stream.body[Symbol.asyncIterator]();
    expect((await iterator.next()).value.toString()).toBe(chunk("one"));
    expect(await failure(iterator.next())).toMatchObject({ kind: "timeout", deadline: "idle", stage: "receiving" });
    await closedWithin("stall", 2_000);
  });

  it("total: an upstream that keeps the connection alive forever is still cut at the deadline", async () => {
    const started = performance.now();
    const stream = await call("drip", { deadlines: { idleTimeoutMs: 200, totalTimeoutMs: 600 } });
    expect(await failure(readAll(stream))).toMatchObject({ kind: "timeout", deadline: "total" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(550);
    await closedWithin("drip", 2_000);
  });

  it("a broken connection is a break, not a timeout", async () => {
    const stream = await call("break");
    expect(await failure(readAll(stream))).toMatchObject({ kind: "network", stage: "receiving", deadline: null });
  });

  it("more bytes than the bound: too_large, and the upstream is cut off", async () => {
    const stream = await call("firehose", { maxResponseBytes: 200_000 });
    expect(await failure(readAll(stream))).toMatchObject({ kind: "too_large" });
    await closedWithin("firehose", 2_000);
  });
});

describe("a streamed call's consumer sets the pace", () => {
  it("while the caller does not read, the socket is paused: the upstream's writes block, and no idle timeout fires", async () => {
    const stream = await call("firehose", { deadlines: { idleTimeoutMs: 100 } });
    const iterator = stream.body[Symbol.asyncIterator]();
    await iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 400));
    const upstream = lastSeen("firehose");
    // Unread, only the socket buffers between us fill (a few MB on loopback); the firehose would have sent hundreds.
    expect(upstream.blocked()).toBe(true);
    const held = upstream.written();
    expect(held).toBeLessThan(16 * 1024 * 1024);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(upstream.written() - held).toBeLessThan(64 * 1024);
    // Reading again takes up the stream where it stood: the pause was not a silence.
    let read = 0;
    while (read < held + 1024 * 1024) read += (await iterator.next()).value.length;
    expect(upstream.written()).toBeGreaterThan(held);
    stream.abort();
  });

  it("abort() destroys the upstream request: the supplier's server sees the connection close, and a read in progress ends", async () => {
    const stream = await call("stall");
    const iterator = stream.body[Symbol.asyncIterator]();
    await iterator.next();
    const pending = iterator.next();
    const abortedAt = performance.now();
    stream.abort();
    expect(await failure(pending)).toMatchObject({ name: "AbortError" });
    expect((await closedWithin("stall", 1_000)) - abortedAt).toBeLessThan(1_000);
  });

  it("leaving the loop early aborts too: nobody reading means nobody generating", async () => {
    const stream = await call("firehose");
    for await (const piece of stream.body) {
      expect(piece.length).toBeGreaterThan(0);
      break;
    }
    await closedWithin("firehose", 1_000);
  });

  it("an abort signal ends the call before any answer, with its reason", async () => {
    const controller = new AbortController();
    const pending = call("silent", { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("the buyer went away")), 100);
    expect(await failure(pending)).toMatchObject({ message: "the buyer went away" });
    await closedWithin("silent", 1_000);
  });
});
