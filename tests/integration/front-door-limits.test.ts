/**
 * What a client can make the front door hold (lib/http/connections.ts, lib/http/front-door.ts), over real sockets
 * (node:net, so requests can be pipelined, left unread, left unfinished or aimed at `*`): one request at a time per
 * connection and a cap on pipelined ones, in-flight tracking that ends with the socket, timeouts, a cap on
 * connections per address, non-path targets refused, bounded metric labels, and the direct completion route
 * answering 401/413 before it reads a body. Events are ordered by barriers (an app that holds its answer until the
 * test releases it), never by sleeps.
 */
import { once } from "node:events";
import { request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApiKey, revokeApiKey } from "@/lib/auth/api-keys";
import { env, parseEnv } from "@/lib/env";
import type { ConnectionLimits } from "@/lib/http/connections";
import { createFrontDoorServer, methodTableFromOpenApi, routedPath, type FrontDoorOptions } from "@/lib/http/front-door";
import { log } from "@/lib/log";
import { requestsInFlight } from "@/lib/ops/shutdown";
import { startAppProcess } from "../helpers/app-process";
import { seedAccount } from "../helpers/factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  vi.restoreAllMocks();
});

type App = { server: Server; port: number; calls: string[]; sockets: Socket[] };

/** The front door in front of a small app (as server/main.ts puts it in front of Next). */
async function startFrontDoor(
  app: (req: IncomingMessage, res: ServerResponse) => void,
  options: Partial<FrontDoorOptions> = {},
): Promise<App> {
  const calls: string[] = [];
  const sockets: Socket[] = [];
  const methods = methodTableFromOpenApi({ paths: { "/v1/models": { get: {} }, "/v1/offers/{id}": { get: {}, delete: {} } } });
  const server = createFrontDoorServer(
    (req, res) => {
      calls.push(`${req.method} ${req.url}`);
      app(req, res);
    },
    { methods, ...options },
  );
  server.on("connection", (socket: Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  stops.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { server, port: (server.address() as AddressInfo).port, calls, sockets };
}

/** A raw client connection: what it received, and a promise for its close. */
type Raw = {
  socket: Socket;
  bytes: () => number;
  text: () => string;
  closed: Promise<void>;
  until: (done: (text: () => string) => boolean) => Promise<string>;
};

/** `keepSending`: the client's side stays open when the server's closes (a client that keeps sending regardless). */
async function rawClient(port: number, localAddress?: string, keepSending = false): Promise<Raw> {
  const socket = connect({ port, host: "127.0.0.1", localAddress, allowHalfOpen: keepSending });
  const chunks: Buffer[] = [];
  let size = 0;
  const waiters: (() => void)[] = [];
  socket.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.byteLength;
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on("error", () => undefined); // a reset after the server's answer is part of some cases
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  void closed.then(() => {
    for (const wake of waiters.splice(0)) wake();
  });
  await once(socket, "connect");
  stops.push(async () => void socket.destroy());
  let decoded = "";
  let decodedChunks = 0;
  const text = () => {
    if (decodedChunks < chunks.length) decoded += Buffer.concat(chunks.slice(decodedChunks)).toString("latin1");
    decodedChunks = chunks.length;
    return decoded;
  };
  return {
    socket,
    bytes: () => size,
    text,
    closed,
    until: async (done) => {
      for (;;) {
        if (done(text)) return text();
        if (socket.destroyed || socket.readableEnded) throw new Error(`closed before the expected answer; got: ${text().slice(0, 300)}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`;
const statusLines = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
/** A turn of the event loop for whatever the last socket read set off. */
const settle = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

describe("pipelined requests", () => {
  it("reach the app one at a time, each after the answer before it is out: a client that never reads holds one answer", async () => {
    const answer = Buffer.alloc(16 * 1024 * 1024, 0x61); // larger than the kernel's socket buffers can absorb
    const events: string[] = [];
    let firstCall!: () => void;
    const firstCalled = new Promise<void>((resolve) => (firstCall = resolve));
    let lastFinish!: () => void;
    const lastFinished = new Promise<void>((resolve) => (lastFinish = resolve));
    const front = await startFrontDoor((req, res) => {
      events.push(`call ${req.url}`);
      res.once("finish", () => {
        events.push(`finished ${req.url}`);
        if (req.url === "/d") lastFinish();
      });
      res.writeHead(200, { "content-type": "text/plain", "content-length": answer.byteLength });
      res.end(answer);
      firstCall();
    });
    const client = await rawClient(front.port);
    client.socket.pause(); // never reads, until the end of the test
    client.socket.write(["/a", "/b", "/c", "/d"].map(get).join(""));
    await firstCalled;
    await settle();
    // Node alone hands all four to the app at once and buffers their answers (64 MB here) for a client that reads nothing.
    expect(front.calls).toEqual(["GET /a"]);

    client.socket.resume();
    await client.until(() => client.bytes() >= 4 * answer.byteLength);
    await lastFinished; // the client can have every byte before the server's write callback says so
    expect(front.calls).toEqual(["GET /a", "GET /b", "GET /c", "GET /d"]);
    expect(events).toEqual(["call /a", "finished /a", "call /b", "finished /b", "call /c", "finished /c", "call /d", "finished /d"]);
  });

  it("beyond the cap of waiting ones close the connection; up to it they are all answered in order", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const front = await startFrontDoor(
      (req, res) => {
        void released.then(() => res.end(`answer ${req.url}`));
      },
      { limits: { maxPipelined: 2 } },
    );
    // One being answered and two waiting: served, in order.
    const within = await rawClient(front.port);
    within.socket.write(["/1", "/2", "/3"].map(get).join(""));
    release();
    const text = await within.until((read) => read().includes("answer /3"));
    expect(statusLines(text)).toEqual([200, 200, 200]);
    expect(text.indexOf("answer /1")).toBeLessThan(text.indexOf("answer /2"));

    // One being answered and three waiting: the connection is closed, nothing more is served.
    const calls = front.calls.length;
    const beyond = await rawClient(front.port);
    beyond.socket.write(["/4", "/5", "/6", "/7"].map(get).join(""));
    await beyond.closed;
    expect(front.calls.length - calls).toBeLessThanOrEqual(1);
    expect(statusLines(beyond.text()).length).toBeLessThanOrEqual(1);
  });

  it("are no longer in flight once their connection is gone, whether or not Node says so about their answers", async () => {
    const before = requestsInFlight();
    let go!: () => void;
    const going = new Promise<void>((resolve) => (go = resolve));
    let firstCall!: () => void;
    const firstCalled = new Promise<void>((resolve) => (firstCall = resolve));
    const answer = Buffer.alloc(16 * 1024 * 1024, 0x62);
    const front = await startFrontDoor((_req, res) => {
      firstCall();
      void going.then(() => res.end(answer));
    });
    const client = await rawClient(front.port);
    client.socket.write(["/x", "/y", "/z"].map(get).join(""));
    await firstCalled;
    await settle();
    const [serverSocket] = front.sockets;
    const serverClosed = new Promise((resolve) => serverSocket.once("close", resolve)); // after an EPIPE: not once()
    client.socket.destroy();
    go();
    await serverClosed;
    await settle();
    expect(requestsInFlight()).toBe(before);
  });
});

describe("timeouts", () => {
  it("close a connection that never sends a byte, one that never finishes its headers, and one that never finishes its body", async () => {
    const front = await startFrontDoor((req, res) => void req.resume().on("end", () => res.end("ok")), {
      limits: { headersTimeoutMs: 200, requestTimeoutMs: 600 },
    });
    const silent = await rawClient(front.port);
    const partialHeaders = await rawClient(front.port);
    partialHeaders.socket.write("GET /v1/models HTTP/1.1\r\nHost: localhost\r\n");
    const partialBody = await rawClient(front.port);
    partialBody.socket.write("POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n0123456789");
    // Node's defaults keep all three for 60 s to 5 min (and check every 30 s).
    await Promise.all([silent.closed, partialHeaders.closed, partialBody.closed]);
    expect(statusLines(partialHeaders.text())).toEqual([408]);
    expect(statusLines(partialBody.text())).toEqual([408]);
    expect(front.calls).toEqual(["POST /upload"]);
  });

  it("are the configured ones, and the kept-alive connection closes after the keep-alive timeout it announces", async () => {
    const configured = await startFrontDoor((_req, res) => res.end("ok"));
    expect(configured.server.keepAliveTimeout).toBe(env.HTTP_KEEP_ALIVE_TIMEOUT_MS);
    expect(configured.server.headersTimeout).toBe(env.HTTP_HEADERS_TIMEOUT_MS);
    expect(configured.server.requestTimeout).toBe(env.HTTP_REQUEST_TIMEOUT_MS);
    const defaults = await rawClient(configured.port);
    defaults.socket.write(get("/v1/models"));
    expect(await defaults.until((read) => read().endsWith("ok"))).toMatch(/\r\nKeep-Alive: timeout=5\r\n/i);

    // The headers are part of the request: a headers timeout above the request timeout is a configuration error.
    expect(() => parseEnv({ HTTP_HEADERS_TIMEOUT_MS: "60000", HTTP_REQUEST_TIMEOUT_MS: "30000" })).toThrow(/HTTP_HEADERS_TIMEOUT_MS/);

    const short = await startFrontDoor((_req, res) => res.end("ok"), { limits: { keepAliveTimeoutMs: 1_000 } });
    const client = await rawClient(short.port);
    client.socket.write(get("/v1/models"));
    expect(await client.until((read) => read().endsWith("ok"))).toMatch(/\r\nKeep-Alive: timeout=1\r\n/i);
    await client.closed;
  });
});

describe("connections per client address", () => {
  it("beyond the cap are answered 429 and closed, logged once; other addresses and freed slots are served", async () => {
    const warn = vi.spyOn(log, "warn");
    const front = await startFrontDoor((_req, res) => res.end("ok"), { limits: { maxConnectionsPerClient: 2 } });
    const first = await rawClient(front.port);
    const second = await rawClient(front.port);
    const refused = [await rawClient(front.port), await rawClient(front.port), await rawClient(front.port)];
    for (const client of refused) {
      await client.closed;
      expect(statusLines(client.text())).toEqual([429]);
      expect(JSON.parse(client.text().split("\r\n\r\n")[1]).error.code).toBe("rate_limited");
    }
    expect(warn.mock.calls.filter(([message]) => message.startsWith("connections refused"))).toHaveLength(1);

    // Another address (the socket peer, not a header) has its own count.
    const other = await rawClient(front.port, "127.0.0.2");
    other.socket.write(get("/v1/models"));
    await other.until((read) => read().endsWith("ok"));
    // A freed slot is taken by the next connection.
    first.socket.destroy();
    await new Promise((resolve) => front.sockets[0].once("close", resolve));
    const next = await rawClient(front.port);
    next.socket.write(get("/v1/models"));
    await next.until((read) => read().endsWith("ok"));
    second.socket.write(get("/v1/models"));
    await second.until((read) => read().endsWith("ok"));
  });
});

describe("clients behind a trusted proxy (TRUST_PROXY_HOPS > 0)", () => {
  /** A request as a balancer forwards it: the client's address appended to X-Forwarded-For. */
  const forwarded = (path: string, client: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: ${client}\r\n\r\n`;
  /** Documentation addresses (RFC 3849): header values only, never a destination. */
  const clientAddress = (i: number) => `2001:db8::${i.toString(16)}`;

  /** An app that holds every answer until the test releases it, and says when each request reached it. */
  function heldApp() {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrivals = 0;
    const waiters: { count: number; wake: () => void }[] = [];
    const app = (req: IncomingMessage, res: ServerResponse) => {
      arrivals++;
      for (const waiter of waiters.filter((w) => arrivals >= w.count)) waiter.wake();
      void released.then(() => res.end(`answer ${req.url}`));
    };
    const arrived = (count: number) => (arrivals >= count ? Promise.resolve() : new Promise<void>((wake) => waiters.push({ count, wake })));
    return { app, release, arrived };
  }

  it("do not lock each other out: 256 clients in flight through one balancer, the 257th is served (without trusted hops it is refused)", async () => {
    const held = heldApp();
    const front = await startFrontDoor(held.app, { limits: { trustedProxyHops: 1 } });
    expect(env.HTTP_MAX_CONNECTIONS_PER_CLIENT).toBe(256); // the configured cap, as in production
    const balancer: Raw[] = [];
    for (let i = 0; i < 256; i++) {
      const connection = await rawClient(front.port);
      connection.socket.write(forwarded(`/c${i}`, clientAddress(i)));
      balancer.push(connection);
    }
    await held.arrived(256);
    const next = await rawClient(front.port);
    next.socket.write(forwarded("/c256", clientAddress(256)));
    await held.arrived(257);
    held.release();
    const text = await next.until((read) => read().endsWith("answer /c256"));
    expect(statusLines(text)).toEqual([200]);
    await Promise.all(balancer.map((c, i) => c.until((read) => read().endsWith(`answer /c${i}`))));

    // Without trusted hops the socket peer is the client, as before: its 257th open connection is refused.
    const direct = heldApp();
    const plain = await startFrontDoor(direct.app, { limits: { trustedProxyHops: 0 } });
    for (let i = 0; i < 256; i++) (await rawClient(plain.port)).socket.write(forwarded(`/d${i}`, clientAddress(i)));
    await direct.arrived(256);
    const refused = await rawClient(plain.port);
    await refused.closed;
    expect(statusLines(refused.text())).toEqual([429]);
    direct.release();
  });

  it("bound requests in flight per forwarded client: one beyond its cap gets 429 in the API's shape, the balancer's connection stays open", async () => {
    const warn = vi.spyOn(log, "warn");
    const held = heldApp();
    const front = await startFrontDoor(held.app, { limits: { trustedProxyHops: 1, maxConnectionsPerClient: 2 } });
    const busy = "2001:db8::b";
    const first = await rawClient(front.port);
    first.socket.write(forwarded("/1", busy));
    const second = await rawClient(front.port);
    second.socket.write(forwarded("/2", `10.0.0.1, ${busy}`)); // what the client wrote itself does not matter
    await held.arrived(2);

    const shared = await rawClient(front.port);
    shared.socket.write(forwarded("/3", busy));
    const text = await shared.until((read) => read().endsWith("}}"));
    expect(statusLines(text)).toEqual([429]);
    const [head, body] = text.split("\r\n\r\n");
    expect(head).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(head).toMatch(/\r\nx-request-id: req_/i);
    expect(head).not.toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(body)).toEqual({
      error: {
        message: expect.stringContaining("in flight"),
        type: "rate_limit_error",
        code: "rate_limited",
        limit: 2,
        scope: "requests in flight",
      },
    });
    expect(warn.mock.calls.filter(([message]) => message.startsWith("requests refused"))).toHaveLength(1);
    expect(front.calls).toEqual(["GET /1", "GET /2"]);

    // The same connection carries another client's request next, and it is served.
    shared.socket.write(forwarded("/4", "2001:db8::c"));
    await held.arrived(3);
    held.release();
    await shared.until((read) => read().endsWith("answer /4"));
    // Once its requests are answered, the busy client is served again.
    await first.until((read) => read().endsWith("answer /1"));
    await second.until((read) => read().endsWith("answer /2"));
    shared.socket.write(forwarded("/5", busy));
    await shared.until((read) => read().endsWith("answer /5"));
  });

  it("leave the balancer's own connections to a separate, larger cap on the socket peer", async () => {
    expect(env.HTTP_MAX_CONNECTIONS_PER_PROXY).toBeGreaterThan(env.HTTP_MAX_CONNECTIONS_PER_CLIENT);
    const front = await startFrontDoor((_req, res) => res.end("ok"), {
      limits: { trustedProxyHops: 1, maxConnectionsPerClient: 1, maxConnectionsPerProxy: 3 },
    });
    const open = [await rawClient(front.port), await rawClient(front.port), await rawClient(front.port)];
    const refused = await rawClient(front.port);
    await refused.closed;
    expect(statusLines(refused.text())).toEqual([429]);
    expect(JSON.parse(refused.text().split("\r\n\r\n")[1]).error).toMatchObject({ code: "rate_limited", scope: "connections", limit: 3 });
    for (const [i, connection] of open.entries()) {
      connection.socket.write(forwarded("/v1/models", clientAddress(i)));
      await connection.until((read) => read().endsWith("ok"));
    }
    expect(() => parseEnv({ HTTP_MAX_CONNECTIONS_PER_PROXY: "-1" })).toThrow(/HTTP_MAX_CONNECTIONS_PER_PROXY/);
  });
});

describe("request targets that are not a path", () => {
  it("are answered 400 in the API's error shape by the front door, whatever the method; the app never sees them", async () => {
    const front = await startFrontDoor((_req, res) => res.end("app"));
    for (const line of [
      "GET *",
      "OPTIONS *",
      "POST *x",
      "DELETE *",
      "GET http://evil.example/v1/models",
      "PUT https://localhost/v1/offers/1",
    ]) {
      const client = await rawClient(front.port);
      client.socket.write(`${line} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n`);
      const text = await client.until((read) => read().includes("}}"));
      expect(statusLines(text), line).toEqual([400]);
      const [head, body] = text.split("\r\n\r\n");
      expect(head).toMatch(/\r\nx-request-id: req_/i);
      expect(JSON.parse(body)).toEqual({
        error: { message: expect.stringContaining("path"), type: "invalid_request_error", code: "invalid_request" },
      });
    }
    expect(front.calls).toEqual([]);
  });
});

describe("metric labels", () => {
  it("are the route table's templates and two fixed values, whatever the paths and methods; completions count however the path is spelled", async () => {
    const server = await startRouteServer();
    stops.push(server.stop);
    const scrape = async () =>
      await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${env.METRICS_TOKEN}` } })).text();
    const completions401 = (text: string) => Number(/^svc_completions_total\{status="401"\} (\d+)/m.exec(text)?.[1] ?? 0);
    const before = await scrape();

    const asks: Promise<unknown>[] = [];
    for (let i = 0; i < 40; i++) asks.push(fetch(`${server.url}/nope-${i}/${"x".repeat(i)}`).then((r) => r.arrayBuffer()));
    for (let i = 0; i < 20; i++) asks.push(fetch(`${server.url}/v1/unknown-${i}`).then((r) => r.arrayBuffer()));
    for (let i = 0; i < 5; i++)
      asks.push(fetch(`${server.url}/v1/supply/offers/${"00000000-0000-4000-8000-00000000000" + i}`).then((r) => r.arrayBuffer()));
    await Promise.all(asks);
    const odd = await rawClient(Number(new URL(server.url).port));
    odd.socket.write("PROPFIND /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\nGET * HTTP/1.1\r\nHost: localhost\r\n\r\n");
    await odd.until((read) => statusLines(read()).length === 2 && read().endsWith("}}"));
    // Spellings Next routes to the completion handler (its URL parsing resolves `.` and `%2e` segments).
    for (const path of ["/v1/chat/./completions", "/v1/chat/%2e/completions", "/v1/chat/completions"]) {
      const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(res.status, path).toBe(401);
    }

    const after = await scrape();
    const routes = new Set([...after.matchAll(/^svc_http_requests_total\{route="([^"]*)",method="([^"]*)"/gm)].map((m) => m[1]));
    const methods = new Set([...after.matchAll(/^svc_http_requests_total\{route="[^"]*",method="([^"]*)"/gm)].map((m) => m[1]));
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    for (const route of routes) expect([...Object.keys(doc.paths), "page", "unmatched"], route).toContain(route);
    expect([...routes]).toEqual(expect.arrayContaining(["unmatched", "/v1/{path}", "/v1/supply/offers/{id}", "/v1/chat/completions"]));
    expect([...methods].every((m) => ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"].includes(m))).toBe(true);
    expect(methods).toContain("other");
    expect(after).not.toMatch(/nope|unknown-|00000000-0000/);
    expect(completions401(after) - completions401(before)).toBe(3);
  });

  it("match the path Next routes to: repeated slashes, backslashes, dot segments and a trailing slash are the same route", () => {
    const table = methodTableFromOpenApi({
      paths: {
        "/v1/chat/completions": { post: {} },
        "/v1/supply/offers/{id}": { get: {} },
        "/v1/{path}": { get: { "x-svc-catch-all": true } },
      },
    });
    for (const spelling of [
      "/v1/chat/completions",
      "//v1/chat/completions",
      "/v1//chat/completions/",
      "/v1/chat\\completions",
      "/v1/chat/./completions",
      "/v1/chat/%2E/completions",
      "/v1/x/../chat/completions?a=b",
    ]) {
      expect(table.template(routedPath(spelling)), spelling).toBe("/v1/chat/completions");
    }
    expect(table.template(routedPath("/v1/supply/offers/abc"))).toBe("/v1/supply/offers/{id}");
    expect(table.template(routedPath("/v1/chat/completion%73"))).toBe("/v1/{path}"); // Next does not decode it either
    expect(table.template(routedPath("/market/llama"))).toBeNull();
  });
});

// Last in the file: its requests count in 127.0.0.1's per-IP windows.
describe("the direct completion route", () => {
  const limit = env.MAX_BODY_BYTES;
  const head = (headers: Record<string, string>) =>
    `POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("")}\r\n`;
  const errorOf = (text: string) => JSON.parse(text.split("\r\n\r\n")[1]) as { error: { code: string } };

  async function serverAndKeys() {
    const server: RouteServer = await startRouteServer();
    stops.push(server.stop);
    const buyer = await seedAccount();
    const { key } = await createApiKey(buyer.id, { name: "live" });
    const revoked = await createApiKey(buyer.id, { name: "revoked" });
    await revokeApiKey(buyer.id, revoked.id);
    return { server, port: Number(new URL(server.url).port), key, revokedKey: revoked.key };
  }

  it("answers a missing, malformed, unknown or revoked key 401 and a Content-Length over the limit 413 before reading a byte of the body", async () => {
    const { server, port, key, revokedKey } = await serverAndKeys();
    const tenGigabytes = "10000000000";
    const cases: [Record<string, string>, number, string][] = [
      [{ "Content-Length": tenGigabytes }, 401, "missing_credentials"],
      [{ "Content-Length": tenGigabytes, Authorization: "Bearer not-a-key" }, 401, "invalid_api_key"],
      [{ "Content-Length": tenGigabytes, Authorization: `Bearer svc_${"x".repeat(43)}` }, 401, "invalid_api_key"],
      [{ "Content-Length": tenGigabytes, Authorization: `Bearer ${revokedKey}` }, 401, "invalid_api_key"],
      [{ "Content-Length": tenGigabytes, Authorization: `Bearer ${key}` }, 413, "payload_too_large"],
      [{ "Transfer-Encoding": "chunked", Authorization: "Basic eDp5" }, 401, "missing_credentials"],
    ];
    for (const [headers, status, code] of cases) {
      const client = await rawClient(port);
      client.socket.write(head(headers)); // the headers only: a body that is not read never needs to arrive
      const text = await client.until((read) => read().includes("}}"));
      expect(statusLines(text), code).toEqual([status]);
      expect(errorOf(text).error.code).toBe(code);
      if (headers["Content-Length"]) {
        expect(text).toMatch(/\r\nconnection: close\r\n/i);
        await client.closed;
      }
    }
    // A body within the limit that the route did not need is discarded: the connection stays usable.
    const client = await rawClient(port);
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
    client.socket.write(`${head({ "Content-Length": String(body.length), Authorization: "Bearer svc_nope" })}${body}`);
    await client.until((read) => read().includes("}}"));
    client.socket.write(get("/healthz"));
    const text = await client.until((read) => statusLines(read()).length === 2 && read().endsWith("}"));
    expect(statusLines(text)[0]).toBe(401);
    expect(server.requests.filter((r) => r.startsWith("POST"))).toHaveLength(cases.length + 1);
  });

  it("stops reading an endless chunked body at the limit, answers 413 and closes the connection", async () => {
    const { port, key } = await serverAndKeys();
    const client = await rawClient(port);
    client.socket.write(head({ "Transfer-Encoding": "chunked", Authorization: `Bearer ${key}` }));
    const chunk = Buffer.concat([Buffer.from("10000\r\n"), Buffer.alloc(0x10000, 0x20), Buffer.from("\r\n")]);
    let sent = 0;
    const answered = client.until((read) => read().includes("}}"));
    let done = false;
    void answered.finally(() => (done = true)).catch(() => undefined);
    // Send until the server answers (it never will if it reads on): 64 MB at most, 64 times the limit.
    while (!done && !client.socket.destroyed && sent < 64 * 1024 * 1024) {
      sent += 0x10000;
      if (!client.socket.write(chunk)) await Promise.race([once(client.socket, "drain"), client.closed, answered.catch(() => undefined)]);
    }
    const text = await answered;
    expect(statusLines(text)).toEqual([413]);
    expect(errorOf(text).error.code).toBe("payload_too_large");
    await client.closed;
    expect(sent).toBeLessThan(64 * 1024 * 1024);
    expect(limit).toBeLessThan(sent);
  });
});

/**
 * The server in a process of its own, as production runs it: in the test's own process the client happens to read the
 * answer before the reset reaches it, which hides the bug (measured before lingering close: 413 in 10 of 10 in-process,
 * 6 of 10 from another process).
 */
describe("lingering close", () => {
  const FIVE_MB = 5 * 1024 * 1024;

  type Upload = { status?: number; code?: string; error?: string };

  /**
   * Uploads `bytes` of body with node:http as a client library does (Content-Length, or chunked when `chunked`), as
   * fast as the server takes it. Read: the answer's status and code, once its body is read whole; else the error that
   * stopped the client before that (EPIPE, ECONNRESET: the connection was reset under it).
   */
  function upload(port: number, path: string, headers: Record<string, string>, bytes: number, chunked: boolean): Promise<Upload> {
    return new Promise((resolve) => {
      let settled = false;
      let outcome: Upload | undefined;
      let closed = false;
      // Resolved once the connection is closed too: the server counts a lingering connection until it sees the close, and
      // the next try must not find the last one still counted (it did, once in ten, on a loaded machine).
      const finish = () => {
        if (outcome && closed) resolve(outcome);
      };
      const settle = (result: Upload) => {
        if (settled) return;
        settled = true;
        outcome = result;
        finish();
      };
      const req = request(
        {
          host: "127.0.0.1",
          port,
          method: "POST",
          path,
          agent: false,
          headers: { "content-type": "application/json", ...(chunked ? {} : { "content-length": String(bytes) }), ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", (error: NodeJS.ErrnoException) => settle({ error: error.code ?? error.message }));
          res.on("end", () => {
            const body = Buffer.concat(chunks).toString("utf8");
            settle({ status: res.statusCode, code: (JSON.parse(body) as { error: { code: string } }).error.code });
          });
        },
      );
      // Once it has read its answer the client stops writing (node:http then ends the socket): only an error before counts.
      req.on("error", (error: NodeJS.ErrnoException) => settle({ error: error.code ?? error.message }));
      req.on("socket", (socket) =>
        socket.once("close", () => {
          closed = true;
          finish();
        }),
      );
      const block = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < bytes && !settled && !req.destroyed) {
          const size = Math.min(block.byteLength, bytes - sent);
          sent += size;
          if (!req.write(block.subarray(0, size))) return void req.once("drain", pump);
        }
        if (!settled && !req.destroyed) req.end();
      };
      pump();
    });
  }

  async function tries(count: number, attempt: () => Promise<Upload>): Promise<Upload[]> {
    const outcomes: Upload[] = [];
    for (let i = 0; i < count; i++) outcomes.push(await attempt());
    return outcomes;
  }

  async function appProcess(env: Record<string, string> = {}) {
    const app = await startAppProcess({ LOG_LEVEL: "error", ...env });
    stops.push(() => app.kill());
    return Number(new URL(app.url).port);
  }

  it("lets a client uploading an over-limit body read its 413, 10 of 10 (Content-Length and chunked), and one without a key its 401", async () => {
    const port = await appProcess();
    const { key } = await createApiKey((await seedAccount()).id, { name: "big bodies" });
    const auth = { authorization: `Bearer ${key}` };
    const tooLarge = Array(10).fill({ status: 413, code: "payload_too_large" });
    expect(await tries(10, () => upload(port, "/v1/chat/completions", auth, FIVE_MB, false))).toEqual(tooLarge);
    expect(await tries(10, () => upload(port, "/v1/chat/completions", auth, FIVE_MB, true))).toEqual(tooLarge);
    const noKey = Array(10).fill({ status: 401, code: "missing_credentials" });
    expect(await tries(10, () => upload(port, "/v1/chat/completions", {}, FIVE_MB, false))).toEqual(noKey);
    // Chunked, the 401 keeps the connection while the rest is within the limit, and closes it once it is not.
    expect(await tries(10, () => upload(port, "/v1/chat/completions", {}, FIVE_MB, true))).toEqual(noKey);
  });

  it("lets a connection refused for the per-address cap read its 429 while it uploads", async () => {
    const port = await appProcess({ HTTP_MAX_CONNECTIONS_PER_CLIENT: "4" });
    for (let i = 0; i < 4; i++) {
      const holder = await rawClient(port);
      holder.socket.write(get("/healthz"));
      await holder.until((read) => read().endsWith("}"));
    }
    const outcomes = await tries(10, () => upload(port, "/v1/chat/completions", {}, FIVE_MB, false));
    expect(outcomes).toEqual(Array(10).fill({ status: 429, code: "rate_limited" }));
  });

  it("is bounded: a client that keeps sending is cut after the byte bound, a slow one after the time bound", async () => {
    // In this process: the bounds are the server's doing, whatever the client's timing.
    const { key } = await createApiKey((await seedAccount()).id, { name: "endless" });
    const endless = `POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer ${key}\r\nContent-Length: 10000000000\r\n\r\n`;
    const serverWith = async (limits: Partial<ConnectionLimits>) => {
      const server = await startRouteServer({ limits });
      stops.push(server.stop);
      return Number(new URL(server.url).port);
    };

    // As fast as it can: cut once the server has discarded 256 KB (kernel buffers hold a few MB besides), long before
    // the time bound.
    const fast = await rawClient(await serverWith({ lingerMaxBytes: 256 * 1024, lingerMs: 20_000 }), undefined, true);
    fast.socket.write(endless);
    const started = performance.now();
    const block = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    while (!fast.socket.destroyed && sent < 1024 * 1024 * 1024) {
      sent += block.byteLength;
      // Not events.once: it rejects on the reset (EPIPE) that ends this loop.
      if (!fast.socket.write(block)) await Promise.race([new Promise((resolve) => fast.socket.once("drain", resolve)), fast.closed]);
    }
    await fast.closed;
    expect(statusLines(fast.text())).toEqual([413]);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
    expect(performance.now() - started).toBeLessThan(10_000);

    // A trickle: cut once the time bound has passed.
    const slow = await rawClient(await serverWith({ lingerMaxBytes: 64 * 1024 * 1024, lingerMs: 1_000 }), undefined, true);
    slow.socket.write(endless);
    await slow.until((read) => read().includes("}}"));
    const answeredAt = performance.now();
    const trickle = setInterval(() => slow.socket.write("x"), 20);
    await slow.closed;
    clearInterval(trickle);
    expect(statusLines(slow.text())).toEqual([413]);
    const lingered = performance.now() - answeredAt;
    expect(lingered).toBeGreaterThan(800);
    expect(lingered).toBeLessThan(10_000); // without the bound the trickle would go on until the test's timeout
  });

  it("holds at most as many refused connections lingering per address as the cap: beyond, they close at once", async () => {
    const front = await startFrontDoor((_req, res) => res.end("ok"), {
      limits: { maxConnectionsPerClient: 2, lingerMs: 60_000, lingerMaxBytes: 64 * 1024 * 1024 },
    });
    await rawClient(front.port);
    await rawClient(front.port);
    const refused = [];
    for (let i = 0; i < 3; i++) {
      const client = await rawClient(front.port, undefined, true);
      await client.until((read) => read().endsWith("}}"));
      expect(statusLines(client.text())).toEqual([429]);
      refused.push(client);
    }
    // The third is closed by the server: bytes sent after its close are answered with a reset.
    const [first, second, third] = refused;
    const knock = setInterval(() => third.socket.write("x"), 10);
    await third.closed;
    clearInterval(knock);
    // The first two linger: what they send is read and discarded (32 MB: more than the kernel's buffers hold unread).
    for (const client of [first, second]) {
      for (let i = 0; i < 31; i++) client.socket.write(Buffer.alloc(1024 * 1024));
      await new Promise((resolve) => client.socket.write(Buffer.alloc(1024 * 1024), resolve));
      expect(client.socket.destroyed).toBe(false);
    }
  });
});
