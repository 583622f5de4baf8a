import { createServer, type Server, type ServerResponse } from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { startAppProcess, type AppProcess } from "../helpers/app-process";
import { completion } from "../helpers/canned-upstream";
import { seedSignedInAccount } from "../helpers/factories";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { buyerBalance, seedBuyer } from "../helpers/router-factories";

/**
 * A database outage (a restart, a failover) seen by an app process: every route answers 503 `service_unavailable`
 * with Retry-After (never a 500), the process survives its pools' connections being dropped, a completion caught
 * between its reservation and its clear is charged nothing and leaves no hold behind once the database is back.
 * The outage is a TCP proxy in front of the test database that the test cuts: every connection through it is
 * destroyed and new ones are refused, as during a PostgreSQL restart.
 */

type Outage = { url: string; cut: () => void; restore: () => void; stop: () => Promise<void> };

async function startDatabaseProxy(databaseUrl: string): Promise<Outage> {
  const target = new URL(databaseUrl);
  const sockets = new Set<net.Socket>();
  let up = true;
  const server = net.createServer((client) => {
    if (!up) return void client.destroy();
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxied = new URL(databaseUrl);
  proxied.hostname = "127.0.0.1";
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    cut: () => {
      up = false;
      for (const socket of sockets) socket.destroy();
    },
    restore: () => {
      up = true;
    },
    stop: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An upstream that holds every chat answer until the test releases it, and says when a request has arrived. */
type GatedUpstream = { url: string; arrived: () => Promise<void>; release: () => void; stop: () => Promise<void> };

async function startGatedUpstream(): Promise<GatedUpstream> {
  const waiting: ServerResponse[] = [];
  let onArrival: (() => void) | undefined;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      waiting.push(res);
      onArrival?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const body = JSON.stringify(
    completion({ content: "Held, then answered." }, { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    arrived: () => new Promise<void>((resolve) => (waiting.length ? resolve() : (onArrival = resolve))),
    release: () => {
      for (const res of waiting.splice(0)) res.writeHead(200, { "content-type": "application/json" }).end(body);
    },
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let proxy: Outage;
let upstream: GatedUpstream;
let app: AppProcess;

beforeAll(async () => {
  [proxy, upstream] = await Promise.all([startDatabaseProxy(env.DATABASE_URL!), startGatedUpstream()]);
  app = await startAppProcess({ DATABASE_URL: proxy.url });
}, 60_000);
afterAll(async () => {
  proxy.restore();
  await app.kill();
  await Promise.all([proxy.stop(), upstream.stop()]);
});

const messages = [{ role: "user", content: "Say something." }];

function complete(key: string, model: string) {
  return fetch(`${app.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, messages, max_tokens: 16 }),
  });
}

async function expectUnavailable(res: Response) {
  const body = (await res.json()) as { error: { code: string; type: string } };
  expect({ status: res.status, code: body.error.code }).toEqual({ status: 503, code: "service_unavailable" });
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
}

/** Polls the test's own connection (not through the proxy) until `check` holds, failing after `ms`. */
async function eventually(check: () => Promise<boolean>, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a database outage", () => {
  it("is a 503 with Retry-After on the completion path and the session routes, and the process serves again after", async () => {
    const model = await seedPrivateModel();
    await seedOffer({
      models: [{ id: model.id, upstreamModel: "served" }],
      priceCents: 50,
      dailyCapacityMicroDiem: 10n ** 12n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: "k",
    });
    const buyer = await seedBuyer(10_000_000n);
    const signedIn = await seedSignedInAccount();

    proxy.cut();
    try {
      await expectUnavailable(await complete(buyer.key, model.id));
      await expectUnavailable(await fetch(`${app.url}/v1/account/balance`, { headers: { cookie: signedIn.cookie } }));
      await expectUnavailable(await fetch(`${app.url}/v1/account/api-keys`, { headers: { cookie: signedIn.cookie } }));
    } finally {
      proxy.restore();
    }

    // The same process, its dropped connections replaced: served and charged as usual.
    const served = complete(buyer.key, model.id);
    await upstream.arrived();
    upstream.release();
    expect((await served).status).toBe(200);
    expect((await fetch(`${app.url}/v1/account/balance`, { headers: { cookie: signedIn.cookie } })).status).toBe(200);
    expect((await buyerBalance(buyer.id)).balance).toBeLessThan(10_000_000n);
  });

  it("a completion whose clear meets the outage is charged nothing and leaves no hold once the database is back", async () => {
    const model = await seedPrivateModel();
    await seedOffer({
      models: [{ id: model.id, upstreamModel: "served" }],
      priceCents: 50,
      dailyCapacityMicroDiem: 10n ** 12n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: "k",
    });
    const initial = 10_000_000n;
    const buyer = await seedBuyer(initial);

    const pending = complete(buyer.key, model.id);
    await upstream.arrived();
    // Reserved and forwarded: its hold is active now. The database goes away before the answer comes back.
    expect(await db.hold.count({ where: { accountId: buyer.id, status: "active" } })).toBe(1);
    proxy.cut();
    upstream.release();
    const res = await pending;
    await expectUnavailable(res);

    proxy.restore();
    await eventually(async () => (await db.hold.count({ where: { accountId: buyer.id, status: "active" } })) === 0);
    expect(await buyerBalance(buyer.id)).toEqual({ balance: initial, held: 0n });
  });
});
