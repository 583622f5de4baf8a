import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GET as getHealth } from "@/app/healthz/route";
import { env } from "@/lib/env";
import { GET as getModels } from "@/app/v1/models/route";
import { db } from "@/lib/db/client";
import { CATALOG } from "@/lib/market/catalog";
import { encryptCredential } from "@/lib/upstream/key-encryption";
import { jsonRequest } from "../helpers/http";
import { seedAccount } from "../helpers/factories";

describe("GET /v1/models", () => {
  let offerIds: string[] = [];

  beforeAll(async () => {
    const supplier = await seedAccount();
    const offers = await Promise.all(
      [140, 95].map((price_cents) =>
        db.offer.create({
          data: {
            supplierId: supplier.id,
            upstreamBaseUrl: "http://127.0.0.1:9/v1",
            upstreamKeyCiphertext: encryptCredential("k"),
            priceCents: price_cents,
            dailyCapacityMicroDiem: 10_000_000n,
            models: { create: [{ modelId: "venice-uncensored", upstreamModel: "venice-uncensored" }] },
          },
        }),
      ),
    );
    offerIds = offers.map((o) => o.id);
  });

  afterAll(async () => {
    await db.offer.updateMany({ where: { id: { in: offerIds } }, data: { status: "withdrawn" } });
  });

  it("lists the catalog in OpenAI's list shape with list prices and the best posted price", async () => {
    const res = await getModels(jsonRequest("GET", "/v1/models"));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { object: string; data: Record<string, unknown>[] };
    expect(body.object).toBe("list");
    // Other test files add private test-only models in parallel: every catalog model must be listed.
    expect(body.data.map((m) => m.id)).toEqual(expect.arrayContaining(CATALOG.map((m) => m.id)));
    const llama = body.data.find((m) => m.id === "llama-3.3-70b")!;
    expect(llama).toMatchObject({
      object: "model",
      owned_by: "svc",
      pricing: { input_diem_per_mtok: "0.700000", output_diem_per_mtok: "2.800000" },
    });
    expect(typeof llama.created).toBe("number");
    // Other test files may post offers on other models; this one alone posts venice-uncensored.
    const venice = body.data.find((m) => m.id === "venice-uncensored")!;
    expect(venice.best_price_cents).toBe(95);
  });

  it("ignores credentials: it is public", async () => {
    const res = await getModels(jsonRequest("GET", "/v1/models", undefined, { authorization: "Bearer nonsense", cookie: "svc_session=x" }));
    expect(res.status).toBe(200);
  });
});

describe("GET /healthz", () => {
  it("is 200 {status: ok} when the database and the chain answer, and says nothing else", async () => {
    const res = await getHealth(jsonRequest("GET", "/healthz"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("is 503 {status: degraded} when the chain fails, and logs which part failed without the RPC URL, its key or the database address", async () => {
    const secret = "sk-live-0123456789abcdef";
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    vi.resetModules();
    vi.stubEnv("BASE_RPC_URL", `http://127.0.0.1:9/v2/${secret}`);
    vi.stubEnv("LOG_LEVEL", "warn");
    try {
      const { GET } = await import("@/app/healthz/route");
      const res = await GET(jsonRequest("GET", "/healthz"));
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ status: "degraded" });
      expect(text).not.toMatch(/127\.0\.0\.1|sk-live|5432|rpc|database/i);

      const logged = lines.join("");
      expect(logged).toMatch(/health degraded/);
      expect(logged).toMatch(/"chain":\{"ok":false/);
      expect(logged).not.toContain(secret);
      expect(logged).not.toContain("127.0.0.1:9");
      const dbUrl = new URL(env.DATABASE_URL!);
      expect(logged).not.toContain(`${dbUrl.hostname}:${dbUrl.port}`);
    } finally {
      write.mockRestore();
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });

  it("probes the chain at most once per few seconds however many requests arrive", async () => {
    let rpcCalls = 0;
    const counting = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", async () => {
        rpcCalls++;
        const upstream = await fetch(env.BASE_RPC_URL, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: Buffer.concat(chunks),
        });
        res.writeHead(upstream.status, { "content-type": "application/json" }).end(await upstream.text());
      });
    });
    await new Promise<void>((resolve) => counting.listen(0, "127.0.0.1", resolve));
    vi.resetModules();
    vi.stubEnv("BASE_RPC_URL", `http://127.0.0.1:${(counting.address() as AddressInfo).port}`);
    try {
      const { GET } = await import("@/app/healthz/route");
      const flood = await Promise.all(Array.from({ length: 100 }, () => GET(jsonRequest("GET", "/healthz"))));
      for (let i = 0; i < 100; i++) flood.push(await GET(jsonRequest("GET", "/healthz")));
      expect(flood.every((r) => r.status === 200)).toBe(true);
      expect(rpcCalls).toBeLessThanOrEqual(2); // one probe: chain id and block number
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
      await new Promise<void>((resolve) => counting.close(() => resolve()));
    }
  });
});
