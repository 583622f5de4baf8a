/**
 * The app's HTTP server: Next.js behind lib/http/front-door.ts (`npm start`, `npm run serve`; `npm run dev` and the
 * e2e stack start it with --dev or against a test build). Next's own `next start` cannot see the socket peer or
 * refuse TRACE, which the front door does. Usage: tsx server/main.ts [--dev] [--port 3000] [--hostname 0.0.0.0]
 *
 * SIGTERM (or SIGINT) drains it (lib/ops/shutdown.ts): no new requests, the ones in flight finish until
 * SHUTDOWN_GRACE_MS, the holds of those still unfinished are released and they are answered 503, then it exits;
 * whatever hangs, it exits within SHUTDOWN_GRACE_MS + EXIT_MARGIN_MS.
 */
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { db } from "../lib/db/client";
import { env, publicRpcUrl, deployment } from "../lib/env";
import { API_ROUTES } from "../app/api-routes";
import { DIRECT_ROUTES } from "./direct-routes";
import { createFrontDoorServer, methodTableFromRoutes, refuseShuttingDown } from "../lib/http/front-door";
import { securityHeaders } from "../lib/http/security-headers";
import { exitOnSignals } from "../lib/ops/shutdown";
import { releaseHold } from "../lib/router/holds";
import { LISTEN_PORT } from "../lib/upstream/ssrf";

export const SERVER_OPTIONS = {
  dev: { type: "boolean", default: false },
  port: { type: "string", default: "3000" },
  hostname: { type: "string" },
} as const;

export async function startServer(values: { dev?: boolean; port?: string; hostname?: string }) {
  const dev = values.dev ?? false;
  const port = Number(values.port ?? "3000");
  // Next reads NODE_ENV itself (`next start` and `next dev` set it); it must be set before Next loads.
  // eslint-disable-next-line no-restricted-properties -- NODE_ENV is Next's own, set for Next before it loads
  Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? (dev ? "development" : "production") });
  const { default: next } = await import("next");
  const app = next({ dev, dir: process.cwd(), hostname: values.hostname ?? "localhost", port, ...(dev ? { turbopack: true } : {}) });
  await app.prepare();
  const handle = app.getRequestHandler();

  // Which methods each route serves, from the route list itself (the host already loads the completion route).
  const methods = methodTableFromRoutes(API_ROUTES);
  const headers = securityHeaders({ production: env.SVC_ENV === "production", secure: deployment.secure, publicRpcUrl });
  // In production the front door serves the completion route and the cached market reads itself (server/direct-routes.ts);
  // in dev Next serves them too, so an edit reloads as every other route does.
  const direct = dev ? undefined : DIRECT_ROUTES;
  // Timeouts and connection caps: lib/http/connections.ts (HTTP_* in lib/env.ts).
  const server = createFrontDoorServer((req, res) => void handle(req, res), { methods, headers, direct });
  await new Promise<void>((resolve) => server.listen(port, values.hostname, resolve));
  const { port: listening } = server.address() as AddressInfo;
  // The SSRF check refuses upstreams that are this server (lib/upstream/ssrf.ts).
  LISTEN_PORT.set(listening);
  console.log(
    `svc ${dev ? "dev" : "production"} server on http://${values.hostname ?? "localhost"}:${listening} (front door: X-Forwarded-For, 405s, headers, connection limits)`,
  );

  exitOnSignals(server, {
    graceMs: dev ? Math.min(env.SHUTDOWN_GRACE_MS, 2_000) : env.SHUTDOWN_GRACE_MS,
    releaseHold: (id) => releaseHold(id),
    refuse: refuseShuttingDown,
    close: () => Promise.allSettled([app.close(), db.$disconnect()]),
    say: (line) => console.log(line),
  });
  return server;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: SERVER_OPTIONS });
  startServer(values).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
