import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GET as getHealth } from "@/app/healthz/route";
import { GET as getModels } from "@/app/v1/models/route";
import { db } from "@/lib/db";
import { CATALOG } from "@/lib/market/catalog";
import { encryptCredential } from "@/lib/upstream/key-encryption";
import { jsonRequest } from "../helpers/http";
import { seedAccount } from "../helpers/factories";

describe("GET /v1/models", () => {
  let offerIds: string[] = [];

  beforeAll(async () => {
    const supplier = await seedAccount();
    const offers = await Promise.all(
      [140, 95].map((priceCents) =>
        db.offer.create({
          data: {
            supplierId: supplier.id,
            upstreamBaseUrl: "http://127.0.0.1:9/v1",
            upstreamKeyCiphertext: encryptCredential("k"),
            priceCents,
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
  it("is 200 when the database and the chain answer", async () => {
    const res = await getHealth(jsonRequest("GET", "/healthz"));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ status: "ok", database: { ok: true }, chain: { ok: true, chain_id: 8453 } });
  });

  it("is 503 and names the failing part when the chain is unreachable", async () => {
    vi.resetModules();
    vi.stubEnv("BASE_RPC_URL", "http://127.0.0.1:9");
    try {
      const { GET } = await import("@/app/healthz/route");
      const res = await GET(jsonRequest("GET", "/healthz"));
      expect(res.status).toBe(503);
      const body = await res.json();
      expect(body).toMatchObject({ status: "degraded", database: { ok: true }, chain: { ok: false } });
      expect(body.chain.error).toBeTruthy();
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });
});
