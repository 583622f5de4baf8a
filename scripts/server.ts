/**
 * The app's HTTP server: Next.js behind lib/http/front-door.ts (`npm start`; `npm run dev` and the e2e stack start
 * it with --dev or against a test build). Next's own `next start` cannot see the socket peer or refuse TRACE, which
 * the front door does. Usage: tsx scripts/server.ts [--dev] [--port 3000] [--hostname 0.0.0.0]
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { env, publicRpcUrl, deployment } from "../lib/env";
import { frontDoor, loadMethodTable } from "../lib/http/front-door";
import { securityHeaders } from "../lib/http/security-headers";
import { LISTEN_PORT } from "../lib/upstream/ssrf";

const { values } = parseArgs({
  options: { dev: { type: "boolean", default: false }, port: { type: "string", default: "3000" }, hostname: { type: "string" } },
});
const dev = values.dev;
const port = Number(values.port);

async function main() {
  // Next reads NODE_ENV itself (`next start` and `next dev` set it); it must be set before Next loads.
  Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? (dev ? "development" : "production") });
  const { default: next } = await import("next");
  const app = next({ dev, dir: process.cwd(), hostname: values.hostname ?? "localhost", port, ...(dev ? { turbopack: true } : {}) });
  await app.prepare();
  const handle = app.getRequestHandler();

  let resolveTable!: (table: Awaited<ReturnType<typeof loadMethodTable>>) => void;
  let rejectTable!: (error: unknown) => void;
  const methods = new Promise<Awaited<ReturnType<typeof loadMethodTable>>>((resolve, reject) => {
    resolveTable = resolve;
    rejectTable = reject;
  });
  const headers = securityHeaders({ production: env.SVC_ENV === "production", secure: deployment.secure, publicRpcUrl });
  const server = createServer(frontDoor((req, res) => void handle(req, res), { methods, headers }));
  await new Promise<void>((resolve) => server.listen(port, values.hostname, resolve));
  const { port: listening } = server.address() as AddressInfo;
  // The SSRF check refuses upstreams that are this server (lib/upstream/ssrf.ts).
  (globalThis as { [LISTEN_PORT]?: number })[LISTEN_PORT] = listening;
  console.log(`svc ${dev ? "dev" : "production"} server on http://${values.hostname ?? "localhost"}:${listening} (front door: X-Forwarded-For, 405s, headers)`);

  const selfHost = !values.hostname || values.hostname === "0.0.0.0" || values.hostname === "::" ? "127.0.0.1" : values.hostname;
  loadMethodTable(`http://${selfHost.includes(":") ? `[${selfHost}]` : selfHost}:${listening}`).then(resolveTable, (error: unknown) => {
    console.error("could not read /openapi.json for the method table; unknown methods get Next's answers", error);
    rejectTable(error);
  });

  const stop = () => {
    server.close();
    server.closeAllConnections();
    void app.close().finally(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
