import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listUpstreamModels, postChatCompletion, UpstreamError, type Resolver } from "@/lib/upstream/client";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";

const PRODUCTION = { allowPrivate: false };
const DEV = { allowPrivate: true };

let upstream: ReferenceUpstream;
/** Misbehaving upstreams, by base path: /silent never answers, /huge is too big, /garbage is not JSON. */
let odd: Server;
let oddUrl: string;

async function upstreamError(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

beforeAll(async () => {
  upstream = await startReferenceUpstream({ port: 0 });
  odd = createServer((req, res) => {
    if (req.url?.startsWith("/silent")) return;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(req.url?.startsWith("/huge") ? `{"pad":"${"x".repeat(200_000)}"}` : "<html>not json {");
  });
  await new Promise<void>((resolve) => odd.listen(0, "127.0.0.1", resolve));
  oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await upstream.stop();
  odd.closeAllConnections();
  await new Promise((resolve) => odd.close(resolve));
});

describe("listUpstreamModels", () => {
  it("lists the upstream's models with Venice-shaped pricing in micro-diem per 1M tokens", async () => {
    const result = await listUpstreamModels({ baseUrl: upstream.url, apiKey: upstream.apiKey }, { policy: DEV });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const llama = result.models.find((m) => m.id === "llama-3.3-70b");
    expect(llama?.pricing).toEqual({ inputMicroDiemPerMTok: 700_000n, outputMicroDiemPerMTok: 2_800_000n });
  });

  it("reports a refused key as auth_failed", async () => {
    const result = await listUpstreamModels({ baseUrl: upstream.url, apiKey: "wrong-key" }, { policy: DEV });
    expect(result).toEqual({ ok: false, reason: "auth_failed", status: 401 });
  });

  it("reports a non-OpenAI base URL as bad_status", async () => {
    const root = upstream.url.replace(/\/v1$/, "");
    const result = await listUpstreamModels({ baseUrl: root, apiKey: upstream.apiKey }, { policy: DEV });
    expect(result).toEqual({ ok: false, reason: "bad_status", status: 404 });
  });

  it("gives up after its deadline", async () => {
    const started = Date.now();
    const error = await upstreamError(listUpstreamModels({ baseUrl: `${oddUrl}/silent/v1`, apiKey: "k" }, { policy: DEV, timeoutMs: 200 }));
    expect(error.kind).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("throws network when nothing listens", async () => {
    const error = await upstreamError(listUpstreamModels({ baseUrl: "http://127.0.0.1:9/v1", apiKey: "k" }, { policy: DEV }));
    expect(error.kind).toBe("network");
  });
});

describe("postChatCompletion", () => {
  const body = { model: "llama-3.3-70b", messages: [{ role: "user", content: "hello" }], max_tokens: 16 };

  it("forwards once and returns status, parsed JSON and the raw text", async () => {
    const before = upstream.requestCount();
    const res = await postChatCompletion({ baseUrl: upstream.url, apiKey: upstream.apiKey, body, timeoutMs: 5_000, policy: DEV });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ object: "chat.completion", usage: { prompt_tokens: expect.any(Number) } });
    expect(JSON.parse(res.rawText)).toEqual(res.json);
    expect(upstream.requestCount()).toBe(before + 1);
  });

  it("returns upstream errors as they are, without retrying", async () => {
    const before = upstream.requestCount();
    const failing = await postChatCompletion({ baseUrl: `${upstream.url}/`, apiKey: "wrong", body, timeoutMs: 5_000, policy: DEV });
    expect(failing.status).toBe(401);
    expect(failing.json).toMatchObject({ error: { code: "invalid_api_key" } });
    expect(upstream.requestCount()).toBe(before + 1);
  });

  it("gives json null for a body that is not JSON", async () => {
    const res = await postChatCompletion({ baseUrl: `${oddUrl}/garbage/v1`, apiKey: "k", body, timeoutMs: 5_000, policy: DEV });
    expect(res.status).toBe(200);
    expect(res.json).toBeNull();
    expect(res.rawText).toContain("not json");
  });

  it("times out and refuses oversized responses", async () => {
    expect(
      (await upstreamError(postChatCompletion({ baseUrl: `${oddUrl}/silent/v1`, apiKey: "k", body, timeoutMs: 150, policy: DEV }))).kind,
    ).toBe("timeout");
    const tooLarge = await upstreamError(
      postChatCompletion({ baseUrl: `${oddUrl}/huge/v1`, apiKey: "k", body, timeoutMs: 5_000, maxResponseBytes: 10_000, policy: DEV }),
    );
    expect(tooLarge.kind).toBe("too_large");
  });
});

describe("SSRF at connection time", () => {
  const chat = { model: "llama-3.3-70b", messages: [{ role: "user", content: "hi" }] };

  it("refuses http and loopback literals without the dev flag, before any request is sent", async () => {
    const before = upstream.requestCount();
    expect(
      (await upstreamError(postChatCompletion({ baseUrl: upstream.url, apiKey: upstream.apiKey, body: chat, policy: PRODUCTION }))).kind,
    ).toBe("forbidden_address");
    const https = upstream.url.replace("http:", "https:");
    expect(
      (await upstreamError(postChatCompletion({ baseUrl: https, apiKey: upstream.apiKey, body: chat, policy: PRODUCTION }))).kind,
    ).toBe("forbidden_address");
    expect(upstream.requestCount()).toBe(before);
  });

  it("checks every address a host name resolves to, in the connection's own lookup", async () => {
    const https = `https://localhost:${upstream.port}/v1`;
    const error = await upstreamError(listUpstreamModels({ baseUrl: https, apiKey: upstream.apiKey }, { policy: PRODUCTION }));
    expect(error.kind).toBe("forbidden_address");
    expect(error.message).toMatch(/non-public address/);

    // A rebinding answer that mixes a public and a private address is refused outright.
    const rebinding: Resolver = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "10.0.0.7", family: 4 },
    ];
    const mixed = await upstreamError(
      listUpstreamModels({ baseUrl: "https://upstream.example.com/v1", apiKey: "k" }, { policy: PRODUCTION, resolver: rebinding }),
    );
    expect(mixed.kind).toBe("forbidden_address");
    expect(mixed.message).toContain("10.0.0.7");

    const metadata: Resolver = async () => [{ address: "169.254.169.254", family: 4 }];
    const meta = await upstreamError(
      listUpstreamModels({ baseUrl: "http://metadata.example.com/v1", apiKey: "k" }, { policy: DEV, resolver: metadata }),
    );
    expect(meta.kind).toBe("forbidden_address");
  });

  it("connects to exactly the address its lookup checked (the name is never resolved again)", async () => {
    let lookups = 0;
    // "upstream.invalid" cannot resolve through system DNS: reaching the server proves the socket used our answer.
    const resolver: Resolver = async (hostname) => {
      lookups++;
      expect(hostname).toBe("upstream.invalid");
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const res = await postChatCompletion({
      baseUrl: `http://upstream.invalid:${upstream.port}/v1`,
      apiKey: upstream.apiKey,
      body: chat,
      timeoutMs: 5_000,
      policy: DEV,
      resolver,
    });
    expect(res.status).toBe(200);
    expect(lookups).toBe(1);
  });
});

describe("a failed call says how far it got (whose failure it is depends on it)", () => {
  const body = { model: "m", messages: [{ role: "user", content: "hi" }] };

  it("connecting when nothing accepted the connection, sent when the answer never came, receiving when its body stopped", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await upstreamError(
      postChatCompletion({ baseUrl: `http://127.0.0.1:${closedPort}/v1`, apiKey: "k", body, policy: DEV }),
    );
    expect(refused).toMatchObject({ kind: "network", stage: "connecting" });

    const silent = await upstreamError(
      postChatCompletion({ baseUrl: `${oddUrl}/silent/v1`, apiKey: "k", body, timeoutMs: 150, policy: DEV }),
    );
    expect(silent).toMatchObject({ kind: "timeout", stage: "sent" });

    const dripping = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"id":"chatcmpl-1",');
    });
    await new Promise<void>((resolve) => dripping.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(dripping.address() as AddressInfo).port}/v1`;
      const stalled = await upstreamError(postChatCompletion({ baseUrl: url, apiKey: "k", body, timeoutMs: 300, policy: DEV }));
      expect(stalled).toMatchObject({ kind: "timeout", stage: "receiving" });
    } finally {
      dripping.closeAllConnections();
      await new Promise((resolve) => dripping.close(resolve));
    }
  });

  it("queued when every pooled connection to that upstream was busy: the upstream never saw the request", async () => {
    // The pool keeps 64 connections per upstream; 64 unanswered calls hold them all until their own deadline.
    const holding = Array.from({ length: 64 }, () =>
      upstreamError(postChatCompletion({ baseUrl: `${oddUrl}/silent/v1`, apiKey: "k", body, timeoutMs: 2_000, policy: DEV })),
    );
    const queued = await upstreamError(
      postChatCompletion({ baseUrl: `${oddUrl}/silent/v1`, apiKey: "k", body, timeoutMs: 200, policy: DEV }),
    );
    expect(queued).toMatchObject({ kind: "timeout", stage: "queued" });
    for (const error of await Promise.all(holding)) expect(error).toMatchObject({ kind: "timeout", stage: "sent" });
  });
});
