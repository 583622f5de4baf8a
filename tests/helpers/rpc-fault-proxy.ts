/**
 * An RPC that fails on command: a real HTTP server on 127.0.0.1 that forwards JSON-RPC to the test chain, unless
 * told to answer a method with a fault the way real providers do:
 *   http_429          HTTP 429 Too Many Requests (a rate limit), with a JSON-RPC error body
 *   http_503          HTTP 503 from the provider's load balancer
 *   rpc_error         HTTP 200 with a JSON-RPC error (-32005 "limit exceeded", as several providers rate-limit)
 *   hang              no answer at all until the test releases it (the client's own timeout fires first)
 *   null              `result: null`: the "not found" of a node that lags behind, or prunes its transaction index
 *   method_not_found  -32601: a node without the method (geth has no eth_getTransactionBySenderAndNonce)
 * `when` narrows a fault to some calls (by their params). Every call is counted, faulted or not. One JSON-RPC call
 * per HTTP request (viem's http transport does not batch unless asked to); a batch is forwarded as it is.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type RpcFault = "http_429" | "http_503" | "rpc_error" | "hang" | "null" | "method_not_found";

type Rule = { fault: RpcFault; when?: (params: unknown[]) => boolean };
type Call = { jsonrpc?: string; id?: unknown; method?: string; params?: unknown[] };

export type RpcFaultProxy = {
  url: string;
  /** Answers `method` with `fault` from now on (the calls `when` accepts, or all). */
  fail: (method: string, fault: RpcFault, when?: (params: unknown[]) => boolean) => void;
  /** Forwards `method` again (every method when none is named). */
  heal: (method?: string) => void;
  /** Calls of `method` received so far, and how many of them were faulted. */
  calls: (method: string) => { total: number; faulted: number };
  /** Answers every held call 504 (what a load balancer says of a backend that never answered). */
  release: () => void;
  close: () => Promise<void>;
};

export async function startRpcFaultProxy(targetUrl: string): Promise<RpcFaultProxy> {
  const rules = new Map<string, Rule>();
  const counts = new Map<string, { total: number; faulted: number }>();
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();

  const release = () => {
    for (const res of held) if (!res.writableEnded && !res.destroyed) res.writeHead(504).end("gateway timeout");
    held.clear();
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy error: ${String(error)}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const call = JSON.parse(body) as Call | Call[];
    if (!Array.isArray(call) && call.method) {
      const count = counts.get(call.method) ?? { total: 0, faulted: 0 };
      counts.set(call.method, count);
      count.total++;
      const rule = rules.get(call.method);
      if (rule && (!rule.when || rule.when(call.params ?? []))) {
        count.faulted++;
        return answerWithFault(res, rule.fault, call.id);
      }
    }
    const upstream = await fetch(targetUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
    res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
    res.end(await upstream.text());
  }

  function answerWithFault(res: ServerResponse, fault: RpcFault, id: unknown) {
    const json = (status: number, payload: object, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify({ jsonrpc: "2.0", id, ...payload }));
    };
    switch (fault) {
      case "http_429":
        return json(
          429,
          { error: { code: 429, message: "Your app has exceeded its compute units per second capacity" } },
          { "retry-after": "1" },
        );
      case "http_503":
        res.writeHead(503, { "content-type": "text/html" });
        return res.end("<html><body><h1>503 Service Unavailable</h1></body></html>");
      case "rpc_error":
        return json(200, { error: { code: -32005, message: "limit exceeded" } });
      case "null":
        return json(200, { result: null });
      case "method_not_found":
        return json(200, { error: { code: -32601, message: "the method does not exist/is not available" } });
      case "hang":
        held.add(res);
        res.on("close", () => held.delete(res));
        return;
    }
  }

  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    fail: (method, fault, when) => rules.set(method, { fault, when }),
    heal: (method) => (method ? rules.delete(method) : rules.clear()),
    calls: (method) => ({ ...(counts.get(method) ?? { total: 0, faulted: 0 }) }),
    release,
    close: async () => {
      release();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
