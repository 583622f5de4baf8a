import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { clearMarketCache } from "@/lib/market/cache";
import { CATALOG, parseCatalogFile } from "@/lib/market/catalog";
import { addModel, catalogFromUpstreamModels, getPriceAt, getPriceHistory, planCatalog, setModel } from "@/lib/market/catalog-store";
import { GET as listModelsRoute } from "@/app/v1/models/route";
import { startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { readError } from "../helpers/http";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

const exec = promisify(execFile);

/** One valid model of a catalog file. */
const FILE_MODEL = {
  id: "file-model",
  name: "File model",
  input_diem_per_mtok: "1.00",
  output_diem_per_mtok: "2.00",
  context_length: 8192,
  max_output_tokens: 1024,
};

/** The operator's CLI, as `npm run catalog -- …` runs it, against this run's database. */
async function catalogCli(...args: string[]) {
  return exec(process.execPath, ["--import", "tsx", "--import", "./server/server-modules.mjs", "scripts/catalog.ts", ...args], {
    // eslint-disable-next-line no-restricted-properties -- the CLI child inherits the test run's configuration
    env: { ...process.env },
    timeout: 60_000,
  });
}

// Model ids of this file only: other files share the database and the default catalog.
const tag = randomBytes(4).toString("hex");
const ids = { a: `cat-${tag}-a`, b: `cat-${tag}-b`, synced: `cat-${tag}-synced` };

let canned: CannedUpstream;
beforeAll(async () => {
  canned = await startCannedUpstream([
    {
      id: ids.synced,
      object: "model",
      model_spec: {
        name: "Synced model",
        availableContextTokens: 65536,
        maxCompletionTokens: 4096,
        pricing: { input: { usd: 0.2, diem: 0.2 }, output: { usd: 0.8, diem: 0.8 } },
        capabilities: { supportsFunctionCalling: true, supportsResponseSchema: false, supportsVision: false, supportsReasoning: true },
      },
    },
    { id: ids.a, object: "model", model_spec: { availableContextTokens: 32768, pricing: { input: { diem: 0.3 }, output: { diem: 1.5 } } } },
    { id: `cat-${tag}-unpriced`, object: "model" },
  ]);
});
afterAll(() => canned.stop());

describe("the catalog file", () => {
  it("is the default catalog, and a bad file is refused with every problem named", () => {
    expect(CATALOG.map((m) => m.id)).toEqual(["llama-3.3-70b", "qwen3-235b", "mistral-31-24b", "venice-uncensored"]);
    expect(CATALOG[0].inputMicroDiemPerMTok).toBe(700_000n);
    expect(() =>
      parseCatalogFile(
        JSON.stringify({
          models: [{ id: "x", name: "", input_diem_per_mtok: "1e3", output_diem_per_mtok: "1", context_length: 0, max_output_tokens: 1 }],
        }),
      ),
    ).toThrow(/models\.0\.name[\s\S]*input_diem_per_mtok[\s\S]*context_length/);
  });
});

describe("npm run catalog", () => {
  it("adds, re-prices with a versioned history, lists and retires a model; buyers then get a clear 410", async () => {
    await catalogCli(
      "add",
      ids.b,
      "--name",
      "Cat B",
      "--input",
      "0.40",
      "--output",
      "1.60",
      "--context",
      "32768",
      "--max-output",
      "2048",
      "--features",
      "tools",
    );
    const before = new Date();
    await new Promise((r) => setTimeout(r, 20));
    const { stdout: set } = await catalogCli("set", ids.b, "--input", "0.55");
    expect(set).toContain("0.550000");

    const history = await getPriceHistory(db, ids.b);
    expect(history.map((h) => [h.inputMicroDiemPerMTok, h.outputMicroDiemPerMTok])).toEqual([
      [400_000n, 1_600_000n],
      [550_000n, 1_600_000n],
    ]);
    // The price in force when something was reserved before the change is still the old one.
    expect((await getPriceAt(db, ids.b, before))?.inputMicroDiemPerMTok).toBe(400_000n);
    expect((await getPriceAt(db, ids.b, new Date()))?.inputMicroDiemPerMTok).toBe(550_000n);
    const { stdout: audit } = await catalogCli("history", ids.b);
    expect(audit.trim().split("\n")).toHaveLength(3);

    const { stdout: listed } = await catalogCli("list");
    expect(listed).toContain(`${ids.b}\tCat B\t0.550000\t1.600000\t-\t-\t32768\t2048\ttools\tno\tactive`);

    // This process has the model in its cached catalog when it is retired (as every other instance would):
    // the reservation reads models.active itself, so the retirement takes effect at once.
    clearMarketCache();
    const served = async () =>
      ((await (await listModelsRoute(new Request("http://localhost:3000/v1/models"))).json()) as { data: { id: string }[] }).data.map(
        (m) => m.id,
      );
    expect(await served()).toContain(ids.b);
    await catalogCli("retire", ids.b);
    const row = await db.model.findUniqueOrThrow({ where: { id: ids.b } });
    expect(row.active).toBe(false);
    expect(row.retiredAt).not.toBeNull();

    const buyer = await seedBuyer(1_000_000n);
    const res = await callCompletions(buyer.key, { model: ids.b, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(410);
    const error = await readError(res);
    expect(error.code).toBe("model_retired");
    expect(error.message).toContain(ids.b);
    clearMarketCache();
    expect(await served()).not.toContain(ids.b);
  }, 90_000); // several runs of the CLI, each a fresh tsx process (7-10 s each on a loaded 2-core machine)

  it("imports a catalog file: adds, changes and leaves models it does not name alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-catalog-"));
    const file = join(dir, "catalog.json");
    const entry = {
      id: ids.a,
      name: "Cat A",
      input_diem_per_mtok: "0.10",
      output_diem_per_mtok: "0.20",
      context_length: 8192,
      max_output_tokens: 1024,
    };
    writeFileSync(file, JSON.stringify({ models: [entry] }));
    const { stdout: first } = await catalogCli("import", file);
    expect(first).toContain(`+ ${ids.a}`);
    writeFileSync(file, JSON.stringify({ models: [{ ...entry, output_diem_per_mtok: "0.25", features: ["vision"] }] }));
    const { stdout: second } = await catalogCli("import", file);
    expect(second).toContain(`~ ${ids.a}  output 0.200000 -> 0.250000  features - -> vision`);
    expect(second).toContain("llama-3.3-70b  (not in the source; left as it is");
    const a = await db.model.findUniqueOrThrow({ where: { id: ids.a } });
    expect([a.outputMicroDiemPerMTok, a.supportsVision, a.active]).toEqual([250_000n, true, true]);
    expect(await db.model.count({ where: { id: "llama-3.3-70b", active: true } })).toBe(1);
  });

  it("says which models bill hidden reasoning: the default catalog, add and set, and an imported file", async () => {
    expect(CATALOG.filter((m) => m.billsReasoning).map((m) => m.id)).toEqual(["qwen3-235b"]);
    const id = `cat-${tag}-reasoning`;
    await catalogCli(
      "add",
      id,
      "--name",
      "Thinker",
      "--input",
      "0.40",
      "--output",
      "1.60",
      "--context",
      "32768",
      "--max-output",
      "2048",
      "--bills-reasoning",
      "yes",
    );
    expect((await db.model.findUniqueOrThrow({ where: { id } })).billsReasoning).toBe(true);
    const { stdout: set } = await catalogCli("set", id, "--bills-reasoning", "no");
    expect(set).toContain(`${id}\tThinker\t0.400000\t1.600000\t-\t-\t32768\t2048\t-\tno\tactive`);
    await expect(catalogCli("set", id, "--bills-reasoning", "maybe")).rejects.toMatchObject({
      stderr: expect.stringContaining("yes or no"),
    });

    const dir = mkdtempSync(join(tmpdir(), "svc-catalog-"));
    const file = join(dir, "catalog.json");
    const entry = {
      id,
      name: "Thinker",
      input_diem_per_mtok: "0.40",
      output_diem_per_mtok: "1.60",
      context_length: 32768,
      max_output_tokens: 2048,
    };
    writeFileSync(file, JSON.stringify({ models: [{ ...entry, bills_reasoning: true }] }));
    const { stdout } = await catalogCli("import", file);
    expect(stdout).toContain(`~ ${id}  bills_reasoning false -> true`);
    expect((await db.model.findUniqueOrThrow({ where: { id } })).billsReasoning).toBe(true);
  }, 90_000); // four runs of the CLI, each a fresh tsx process

  it("syncs from an upstream's /models: shows the diff, applies nothing without confirmation, applies with --yes", async () => {
    const url = `${canned.url}`;
    const { stdout: dry, stderr } = await catalogCli("sync", url).catch((e: { stdout: string; stderr: string; code: number }) => {
      expect(e.code).toBe(1);
      return e;
    });
    expect(stderr).toBe("");
    expect(dry).toContain(
      `+ ${ids.synced}  "Synced model"  input 0.200000  output 0.800000  context 65536  max_output 4096  features tools  bills_reasoning`,
    );
    expect(dry).toContain(`skipped (no pricing or context length): cat-${tag}-unpriced`);
    expect(dry).toContain("not applied");
    expect(await db.model.count({ where: { id: ids.synced } })).toBe(0);

    const { stdout } = await catalogCli("sync", url, "--yes");
    expect(stdout).toContain("applied");
    const synced = await db.model.findUniqueOrThrow({ where: { id: ids.synced } });
    expect([synced.inputMicroDiemPerMTok, synced.outputMicroDiemPerMTok, synced.supportsTools, synced.billsReasoning]).toEqual([
      200_000n,
      800_000n,
      true,
      true,
    ]);
    const a = await db.model.findUniqueOrThrow({ where: { id: ids.a } });
    expect([a.inputMicroDiemPerMTok, a.outputMicroDiemPerMTok, a.contextTokens]).toEqual([300_000n, 1_500_000n, 32768]);
    expect((await getPriceHistory(db, ids.a)).length).toBeGreaterThanOrEqual(3);
  });

  it("carries cache prices: read from Venice's model_spec and OpenRouter's pricing, versioned, shown on /v1/models", async () => {
    const { models } = catalogFromUpstreamModels({
      data: [
        {
          id: "venice-shaped",
          model_spec: {
            availableContextTokens: 8192,
            pricing: { input: { diem: 1 }, output: { diem: 2 }, cache_input: { diem: 0.1 }, cache_write: { diem: 1.25 } },
          },
        },
        {
          id: "openrouter-shaped",
          context_length: 8192,
          pricing: { prompt: "0.000003", completion: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" },
        },
        { id: "no-cache", context_length: 8192, pricing: { prompt: "0.000001", completion: "0.000002" } },
      ],
    });
    expect(models.map((m) => [m.id, m.inputMicroDiemPerMTok, m.cacheReadMicroDiemPerMTok, m.cacheWriteMicroDiemPerMTok])).toEqual([
      ["venice-shaped", 1_000_000n, 100_000n, 1_250_000n],
      ["openrouter-shaped", 3_000_000n, 300_000n, 3_750_000n],
      ["no-cache", 1_000_000n, null, null],
    ]);

    const id = `cat-${tag}-cached`;
    await addModel(db, { ...models[0], id });
    await setModel(db, id, { cacheRead: "0.05" });
    await setModel(db, id, { cacheWrite: "none" });
    const history = await getPriceHistory(db, id);
    expect(history.map((h) => [h.inputMicroDiemPerMTok, h.cacheReadMicroDiemPerMTok, h.cacheWriteMicroDiemPerMTok])).toEqual([
      [1_000_000n, 100_000n, 1_250_000n],
      [1_000_000n, 50_000n, 1_250_000n],
      [1_000_000n, 50_000n, null],
    ]);
    clearMarketCache();
    const listed = (
      (await (await listModelsRoute(new Request("http://localhost:3000/v1/models"))).json()) as {
        data: { id: string; pricing: Record<string, unknown> }[];
      }
    ).data.find((m) => m.id === id);
    expect(listed?.pricing).toMatchObject({
      input_diem_per_mtok: "1.000000",
      cache_read_diem_per_mtok: "0.050000",
      cache_write_diem_per_mtok: null,
      prompt: "0.000001",
      input_cache_read: "0.00000005",
      input_cache_write: null,
    });
    expect(parseCatalogFile(JSON.stringify({ models: [{ ...FILE_MODEL, cache_read_diem_per_mtok: "0.1" }] }))[0]).toMatchObject({
      cacheReadMicroDiemPerMTok: 100_000n,
      cacheWriteMicroDiemPerMTok: null,
    });
  });

  it("plans nothing when the source matches the database", async () => {
    const plan = await planCatalog(db, CATALOG);
    expect(plan.add).toEqual([]);
    expect(plan.change).toEqual([]);
  });
});
