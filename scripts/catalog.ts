/**
 * The operator's catalog CLI: `npm run catalog -- <command>`.
 *
 *   list [--all]                      models (--all: retired ones too) with their current list price
 *   history <id>                      every list price the model has had, with effective_from
 *   add <id> --name N --input P --output P [--cache-read P] [--cache-write P] --context N --max-output N [--features tools,json_schema,vision]
 *       [--bills-reasoning yes|no]
 *   set <id> [--name N] [--input P] [--output P] [--cache-read P|none] [--cache-write P|none] [--context N] [--max-output N] [--features ...] [--bills-reasoning yes|no]
 *   retire <id>                       stop listing, offering and routing it (buyers get 410 model_retired)
 *   import <file.json>                make the catalog match a catalog file (see catalog/default.json)
 *   sync <upstream base url> [--yes]  read an OpenAI-compatible /models with pricing (Venice's model_spec), show the
 *                                     diff, apply it after confirmation (CATALOG_SYNC_API_KEY is sent as Bearer)
 *   seed-if-empty                     apply catalog/default.json when the database has no models (db:deploy does this)
 *
 * Prices are diem (= USD of list-price inference) per 1M tokens, as decimal strings ("0.70"). --bills-reasoning yes:
 * the model's upstreams bill hidden reasoning, which a buyer who asks for reasoning pays (lib/upstream/metering.ts).
 */
import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import { db } from "../lib/db/client";
import { env } from "../lib/env";
import { readCatalogFile, type CatalogModel } from "../lib/market/catalog";
import {
  addModel,
  applyCatalogPlan,
  catalogFromUpstreamModels,
  describeFeatures,
  describePlan,
  getPriceHistory,
  importCatalog,
  listCatalog,
  planCatalog,
  retireModel,
  seedCatalogWhenEmpty,
  setModel,
} from "../lib/market/catalog-store";
import { formatMicros, parseMicros } from "../lib/money";
import { runDbCommand } from "./db-command";

const USAGE =
  "usage: npm run catalog -- list [--all] | history <id> | add <id> --name N --input P --output P [--cache-read P] [--cache-write P] --context N --max-output N [--features tools,json_schema,vision] [--bills-reasoning yes|no] | set <id> [...] | retire <id> | import <file> | sync <url> [--yes] | seed-if-empty";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    all: { type: "boolean", default: false },
    yes: { type: "boolean", short: "y", default: false },
    name: { type: "string" },
    input: { type: "string" },
    output: { type: "string" },
    "cache-read": { type: "string" },
    "cache-write": { type: "string" },
    context: { type: "string" },
    "max-output": { type: "string" },
    features: { type: "string" },
    "bills-reasoning": { type: "string" },
  },
});

function intOption(name: "context" | "max-output"): number | undefined {
  const text = values[name];
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) throw new Error(`--${name} must be a positive integer`);
  return Number(text);
}

function featureList(): string[] | undefined {
  return values.features === undefined
    ? undefined
    : values.features
        .split(",")
        .map((f) => f.trim())
        .filter(Boolean);
}

function billsReasoningOption(): boolean | undefined {
  const text = values["bills-reasoning"];
  if (text === undefined) return undefined;
  if (text !== "yes" && text !== "no") throw new Error("--bills-reasoning must be yes or no");
  return text === "yes";
}

function need(value: string | undefined, what: string): string {
  if (!value) throw new Error(`${what} is required\n${USAGE}`);
  return value;
}

async function confirm(question: string): Promise<boolean> {
  if (values.yes) return true;
  if (!process.stdin.isTTY) {
    console.log("not applied: re-run with --yes to apply without a terminal");
    return false;
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const answer = await rl.question(`${question} [y/N] `);
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

function printModels(models: Awaited<ReturnType<typeof listCatalog>>) {
  console.log(
    ["id", "name", "input", "output", "cache_read", "cache_write", "context", "max_output", "features", "bills_reasoning", "status"].join(
      "\t",
    ),
  );
  for (const m of models) {
    const status = m.active ? "active" : `retired ${m.retiredAt?.toISOString() ?? ""}`;
    console.log(
      [
        m.id,
        m.name,
        formatMicros(m.inputMicroDiemPerMTok),
        formatMicros(m.outputMicroDiemPerMTok),
        m.cacheReadMicroDiemPerMTok === null ? "-" : formatMicros(m.cacheReadMicroDiemPerMTok),
        m.cacheWriteMicroDiemPerMTok === null ? "-" : formatMicros(m.cacheWriteMicroDiemPerMTok),
        m.contextTokens,
        m.maxOutputTokens,
        describeFeatures(m),
        m.billsReasoning ? "yes" : "no",
        status,
      ].join("\t"),
    );
  }
}

async function main(): Promise<number> {
  const [command, arg] = positionals;
  switch (command) {
    case "list":
      printModels(await listCatalog(db, { includeRetired: values.all }));
      return 0;
    case "history": {
      const id = need(arg, "a model id");
      const rows = await getPriceHistory(db, id);
      if (rows.length === 0) throw new Error(`no price history for ${id}`);
      console.log(["effective_from", "input", "output", "cache_read", "cache_write"].join("\t"));
      const optional = (micros: bigint | null) => (micros === null ? "-" : formatMicros(micros));
      for (const r of rows)
        console.log(
          [
            r.effectiveFrom.toISOString(),
            formatMicros(r.inputMicroDiemPerMTok),
            formatMicros(r.outputMicroDiemPerMTok),
            optional(r.cacheReadMicroDiemPerMTok),
            optional(r.cacheWriteMicroDiemPerMTok),
          ].join("\t"),
        );
      return 0;
    }
    case "add": {
      const price = (text: string | undefined, what: string) => {
        const micros = parseMicros(need(text, what));
        if (micros === null) throw new Error(`${what} must be a decimal price like 0.70`);
        return micros;
      };
      const features = new Set(featureList() ?? []);
      const model: CatalogModel = {
        id: need(arg, "a model id"),
        name: need(values.name, "--name"),
        inputMicroDiemPerMTok: price(values.input, "--input"),
        outputMicroDiemPerMTok: price(values.output, "--output"),
        cacheReadMicroDiemPerMTok: values["cache-read"] === undefined ? null : price(values["cache-read"], "--cache-read"),
        cacheWriteMicroDiemPerMTok: values["cache-write"] === undefined ? null : price(values["cache-write"], "--cache-write"),
        contextTokens: intOption("context") ?? Number(need(undefined, "--context")),
        maxOutputTokens: intOption("max-output") ?? Number(need(undefined, "--max-output")),
        supportsTools: features.has("tools"),
        supportsJsonSchema: features.has("json_schema"),
        supportsVision: features.has("vision"),
        billsReasoning: billsReasoningOption() ?? false,
      };
      printModels([await addModel(db, model)]);
      return 0;
    }
    case "set": {
      const updated = await setModel(db, need(arg, "a model id"), {
        name: values.name,
        input: values.input,
        output: values.output,
        cacheRead: values["cache-read"],
        cacheWrite: values["cache-write"],
        contextLength: intOption("context"),
        maxOutputTokens: intOption("max-output"),
        features: featureList(),
        billsReasoning: billsReasoningOption(),
      });
      printModels([updated]);
      return 0;
    }
    case "retire":
      printModels([await retireModel(db, need(arg, "a model id"))]);
      return 0;
    case "import": {
      const plan = await importCatalog(db, readCatalogFile(need(arg, "a catalog file")));
      for (const line of describePlan(plan)) console.log(line);
      return 0;
    }
    case "sync": {
      const base = need(arg, "the upstream's base URL (e.g. https://api.venice.ai/api/v1)").replace(/\/+$/, "");
      const res = await fetch(`${base}/models`, {
        headers: env.CATALOG_SYNC_API_KEY ? { authorization: `Bearer ${env.CATALOG_SYNC_API_KEY}` } : {},
        signal: AbortSignal.timeout(15_000),
      });
      if (!res.ok) throw new Error(`GET ${base}/models answered ${res.status}`);
      const { models, skipped } = catalogFromUpstreamModels(await res.json());
      if (skipped.length) console.log(`skipped (no pricing or context length): ${skipped.join(", ")}`);
      const plan = await planCatalog(db, models);
      for (const line of describePlan(plan)) console.log(line);
      if (!plan.add.length && !plan.change.length) return 0;
      if (!(await confirm("Apply these changes?"))) return 1;
      await applyCatalogPlan(db, plan, models);
      console.log("applied");
      return 0;
    }
    case "seed-if-empty": {
      const seeded = await seedCatalogWhenEmpty(db);
      console.log(
        seeded ? `catalog was empty: seeded ${seeded} models from catalog/default.json` : "catalog already has models: left as it is",
      );
      return 0;
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

runDbCommand(main);
