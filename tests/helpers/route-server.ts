/**
 * A real HTTP server in the test process that hands each request to the app's own route handler, found by
 * path in the route manifest (app/api-routes.ts), the way Next.js would: static segments win over
 * dynamic ones, a catch-all matches last. Lets a child process (the agent CLI) talk HTTP to the real routes.
 * The production front door (lib/http/front-door.ts) stands in front of it, as server/main.ts puts it in
 * front of Next: X-Forwarded-For gets the socket peer, unknown methods a 405 with Allow.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { API_ROUTES } from "@/app/api-routes";
import { POST as chatCompletions } from "@/app/v1/chat/completions/route";
import type { ConnectionLimits } from "@/lib/http/connections";
import { createFrontDoorServer, methodTableFromRoutes } from "@/lib/http/front-door";
import { readNodeBody, toWebRequest, writeWebResponse } from "@/lib/http/node-adapter";
import { listOperations, type Operation } from "@/lib/http/openapi/operation";

type CompiledRoute = { spec: Operation; pattern: RegExp; names: string[]; rank: number };

function compile(spec: Operation): CompiledRoute {
  const names: string[] = [];
  let dynamic = 0;
  const source = spec.path
    .split("/")
    .map((segment, i, all) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      names.push(param[1]);
      const catchAll = spec.catchAll === true && i === all.length - 1;
      dynamic += catchAll ? 1000 : 1;
      return catchAll ? "(.+)" : "([^/]+)";
    })
    .join("/");
  return { spec, pattern: new RegExp(`^${source}$`), names, rank: dynamic };
}

export type RouteServer = { url: string; stop: () => Promise<void>; requests: string[]; server: Server };

export async function startRouteServer(
  options: { headers?: Record<string, string>; limits?: Partial<ConnectionLimits> } = {},
): Promise<RouteServer> {
  const routes = listOperations(API_ROUTES)
    .map(compile)
    .sort((a, b) => a.rank - b.rank);
  const requests: string[] = [];

  async function handle(incoming: IncomingMessage, outgoing: ServerResponse) {
    const url = new URL(incoming.url ?? "/", `http://${incoming.headers.host ?? "127.0.0.1"}`);
    requests.push(`${incoming.method} ${url.pathname}`);
    const matching = routes.map((r) => ({ r, m: r.pattern.exec(url.pathname) })).filter((x) => x.m !== null);
    if (matching.length === 0) return writeWebResponse(outgoing, new Response("not found", { status: 404 }));
    const bestRank = matching[0].r.rank;
    const found = matching.find((x) => x.r.rank === bestRank && x.r.spec.method === incoming.method);
    if (!found) return writeWebResponse(outgoing, new Response(null, { status: 405 }));

    const params: Record<string, string | string[]> = {};
    try {
      found.r.names.forEach((name, i) => {
        const value = decodeURIComponent(found.m![i + 1]);
        params[name] = found.r.spec.catchAll && i === found.r.names.length - 1 ? value.split("/") : value;
      });
    } catch {
      // Next answers a path with a malformed %-escape with a bare 400 before any route runs.
      return writeWebResponse(outgoing, new Response(null, { status: 400 }));
    }
    const body = incoming.method === "GET" || incoming.method === "HEAD" ? undefined : await readNodeBody(incoming);
    const req = toWebRequest(incoming, body);
    await writeWebResponse(outgoing, await found.r.spec.handler(req, { params: Promise.resolve(params) }));
  }

  const sockets = new Set<Socket>();
  const methods = methodTableFromRoutes(API_ROUTES);
  const app = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    handle(incoming, outgoing).catch((error: unknown) => {
      outgoing.statusCode = 500;
      outgoing.end(`route server: ${(error as Error).stack ?? String(error)}`);
    });
  };
  // As in production (server/main.ts), the front door serves the completion route itself.
  const direct = {
    "POST /v1/chat/completions": Object.assign(
      (req: Request) => {
        requests.push(`POST ${new URL(req.url).pathname}`);
        return chatCompletions(req);
      },
      { meta: chatCompletions.meta },
    ),
  };
  const server = createFrontDoorServer(app, { methods, headers: options.headers, direct, limits: options.limits });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
