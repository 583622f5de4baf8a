/**
 * Every code example the docs show runs as written (#39): each page of /docs is rendered as the site renders it, with
 * this test's own deployment as the origin, and each code block is taken from the HTML a reader copies from. Against a
 * real stack (the app's route handlers over HTTP, the reference upstream, the local chain, a market posted as the stock
 * dev market is): every curl command answers what its comment says (2xx; the top-up's first answer is its 402), and
 * every TypeScript example runs to its end with node (exit 0), with only the environment variables it names.
 *
 * A reader's own wallet address is put in where an example asks for it. Not run, and said so in the output: lines that
 * hold a value only a person has (a wallet's signature, `<...>`, `0x…`),
 * the agent CLI's commands (tests/integration/agent-cli.test.ts runs the CLI), Python (no Python openai package here),
 * and JSON that shows a shape rather than a command. A page that adds a block of another language fails until this
 * test says how to run it.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { renderToStaticMarkup } from "react-dom/server";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DOCS_PAGES, type DocsPage } from "@/components/docs/docs-content";
import type { DeploymentFacts } from "@/components/docs/guides";
import { API_ROUTES } from "@/app/api-routes";
import { createApiKey } from "@/lib/auth/api-keys";
import { createSession } from "@/lib/auth/sessions";
import { ANVIL_DEV_ACCOUNTS } from "@/lib/chain/constants";
import { env } from "@/lib/env";
import { buildOpenApiDocument } from "@/lib/http/openapi/document";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { seedSignedInAccount } from "../helpers/factories";
import { seedBuyerBalance } from "../helpers/ledger-factories";
import { seedDemoOffers, seedPrivateModel } from "../helpers/market-factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { transferUsdc } from "../helpers/x402-client";

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, "../..");
/** Inside node_modules/, so an example's imports resolve to the project's packages as a reader's would to theirs. */
const SCRIPTS = path.join(REPO, "node_modules/.cache/svc-docs-examples");

type Example = { page: string; title: string; language: string; code: string };

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#x27": "'", "#39": "'", nbsp: "\u00a0" };
const unescape = (html: string) => html.replace(/&(amp|lt|gt|quot|#x27|#39|nbsp);/g, (_, name: string) => ENTITIES[name]!);

/** The code blocks of a page as its HTML holds them (components/docs/code-block.tsx: figcaption spans, then <code>). */
function examplesOf(page: DocsPage, html: string): Example[] {
  const found: Example[] = [];
  const figure = /<figure[^>]*>([\s\S]*?)<\/figure>/g;
  for (const [, inner] of html.matchAll(figure)) {
    const caption = /<figcaption[^>]*><span>([\s\S]*?)<\/span>(?:<span[^>]*>([\s\S]*?)<\/span>)?<\/figcaption>/.exec(inner!);
    const code = /<code>([\s\S]*?)<\/code>/.exec(inner!);
    if (!code) continue;
    found.push({ page: page.id, title: unescape(caption?.[1] ?? ""), language: unescape(caption?.[2] ?? ""), code: unescape(code[1]!) });
  }
  return found;
}

/** A value only a person has (a signature, a placeholder): the line is shown, not run. */
const PLACEHOLDER = /<[^>]*>|0x…|…"|=…|\$\{?YOUR/;

/** A shell block's commands: continuation lines joined, comments and blank lines dropped; assignments kept apart. */
function shellCommands(code: string): { assignments: string[]; commands: string[] } {
  const joined = code.replace(/\\\n\s*/g, " ").replace(/'\{\n([\s\S]*?)\n\}'/g, (m) => m.replace(/\n\s*/g, " "));
  const lines = joined
    .split("\n")
    .map((l) => l.replace(/\s+#\s.*$/, "").trim())
    .filter((l) => l && !l.startsWith("#"));
  return {
    assignments: lines.filter((l) => /^(export\s+)?[A-Z_]+=/.test(l) && !PLACEHOLDER.test(l)),
    commands: lines.filter((l) => !/^(export\s+)?[A-Z_]+=/.test(l)),
  };
}

let upstream: ReferenceUpstream;
let server: RouteServer;
let facts: DeploymentFacts;
let environment: NodeJS.ProcessEnv;
let work: string;
/** Values a reader puts in for themselves, put in for the test's reader. */
let own: Record<string, string>;

beforeAll(async () => {
  upstream = await startReferenceUpstream();
  server = await startRouteServer();
  // The stock dev market's offers (prisma/seed.ts), on a model of this test's own that serves tools.
  const model = await seedPrivateModel({ supportsTools: true, supportsJsonSchema: true, supportsVision: true, maxOutputTokens: 4_096 });
  await seedDemoOffers(model.id, upstream, { upstreamModel: "llama-3.3-70b", features: { tools: true, json_schema: true, vision: true } });
  // The reader: a wallet holding USDC on the local chain (funded by the demo buyer's dev account, which no test file
  // sends from), signed in, with a prepaid balance and a key.
  const privateKey = generatePrivateKey();
  const wallet = privateKeyToAccount(privateKey);
  await transferUsdc(ANVIL_DEV_ACCOUNTS[3]!, wallet.address, 50_000_000n);
  const account = await seedSignedInAccount(wallet);
  await seedBuyerBalance(account.id, 20_000_000n);
  const { key } = await createApiKey(account.id, { name: "docs examples" });
  const { token } = await createSession(account.id);
  facts = {
    origin: server.url,
    feeBps: env.PLATFORM_FEE_BPS,
    defaultMaxCents: env.DEFAULT_MAX_PRICE_CENTS,
    topUpMin: env.TOPUP_MIN_USD,
    topUpMax: env.TOPUP_MAX_USD,
    exampleModel: model.id,
  };
  own = { "0xYourChecksummedAddress": wallet.address };
  work = mkdtempSync(path.join(tmpdir(), "svc-docs-examples-"));
  const host = new URL(server.url).hostname;
  writeFileSync(path.join(work, "jar.txt"), `# Netscape HTTP Cookie File\n${host}\tFALSE\t/\tFALSE\t0\tsvc_session\t${token}\n`);
  mkdirSync(SCRIPTS, { recursive: true });
  environment = {
    PATH: process.env.PATH ?? "", // eslint-disable-line no-restricted-properties -- the examples' shell finds curl and node
    HOME: work,
    NODE_ENV: "development",
    SVC_API_KEY: key,
    SVC_SESSION_COOKIE: `svc_session=${token}`,
    SVC_AGENT_PRIVATE_KEY: privateKey,
    // The supplier guide's upstream: the reference upstream stands in for the reader's vLLM.
    UPSTREAM_BASE_URL: upstream.url,
    UPSTREAM_API_KEY: upstream.apiKey,
  };
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await upstream?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

function allExamples(): Example[] {
  const doc = buildOpenApiDocument(API_ROUTES);
  return DOCS_PAGES.flatMap((page) => examplesOf(page, renderToStaticMarkup(page.render({ doc, facts }))));
}

/** What a curl command's answer must be: 2xx, or the 402 with which a top-up without a payment begins. */
function expectedStatus(command: string): (status: number) => boolean {
  if (command.includes("/v1/x402/top-up") && !/payment-signature/i.test(command)) return (s) => s === 402;
  return (s) => s >= 200 && s < 300;
}

describe("the docs' code examples", () => {
  it(
    "run as written against a real stack: every curl answers as its comment says, every TypeScript example exits 0",
    { timeout: 300_000 },
    async () => {
      const examples = allExamples();
      expect(examples.length).toBeGreaterThan(10);
      const ran: string[] = [];
      const shown: string[] = [];
      const failures: string[] = [];

      for (const [i, example] of examples.entries()) {
        const where = `/docs/${example.page} "${example.title}"`;
        if (example.language === "sh" || example.language === "bash") {
          const { assignments, commands } = shellCommands(
            Object.entries(own).reduce((code, [placeholder, value]) => code.replaceAll(placeholder, value), example.code),
          );
          for (const command of commands) {
            if (!command.startsWith("curl ")) {
              shown.push(`${where}: ${command.slice(0, 60)} (not curl)`);
              continue;
            }
            if (PLACEHOLDER.test(command)) {
              shown.push(`${where}: ${command.slice(0, 60)} (a value only a person has)`);
              continue;
            }
            const script = [...assignments, command.replace(/^curl /, `curl -sS -o body.out -w '%{http_code}' --max-time 60 `)].join("\n");
            const { stdout } = await run("bash", ["-c", script], { cwd: work, env: environment }).catch(
              (e: { stdout?: string; stderr?: string }) => ({
                stdout: `exit: ${e.stderr ?? ""}`,
              }),
            );
            const status = Number(stdout.trim().slice(-3));
            if (!expectedStatus(command)(status)) {
              const out = path.join(work, "body.out");
              const body = existsSync(out) ? readFileSync(out, "utf8") : "";
              failures.push(`${where}: ${command.slice(0, 100)} → ${stdout.trim()} ${body.slice(0, 300)}`);
            }
            ran.push(`${where}: ${command.slice(0, 60)}`);
          }
        } else if (example.language === "ts") {
          const file = path.join(SCRIPTS, `example-${i}.mts`);
          writeFileSync(file, example.code);
          const result = await run(process.execPath, ["--import", "tsx", file], { cwd: REPO, env: environment, timeout: 120_000 }).then(
            // An example that prints an answer rather than throwing on it (the top-up's) must not print an error.
            ({ stdout }) => (/\berror\b/i.test(stdout) ? `printed an error: ${stdout.slice(0, 600)}` : null),
            (e: { code?: number; stderr?: string; stdout?: string }) => `exit ${e.code}: ${(e.stderr || e.stdout || "").slice(0, 600)}`,
          );
          if (result) failures.push(`${where}: ${result}`);
          ran.push(`${where} (TypeScript)`);
        } else if (["py", "json"].includes(example.language)) {
          shown.push(`${where} (${example.language})`);
        } else {
          failures.push(`${where}: a block in "${example.language}", which this test does not know how to run`);
        }
      }

      console.log(`docs examples: ran ${ran.length}, shown only ${shown.length}:\n  ${shown.join("\n  ")}`);
      expect(failures).toEqual([]);
      expect(ran.filter((r) => r.endsWith("(TypeScript)")).length).toBeGreaterThanOrEqual(5);
      expect(ran.length).toBeGreaterThanOrEqual(12);
    },
  );
});
