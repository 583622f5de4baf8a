/**
 * The agent CLI (scripts/agent) as an agent runs it: a child process speaking HTTP to the real route handlers
 * (tests/helpers/route-server.ts), paying over x402 on the test chain, completing on a reference upstream.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicClient } from "@/lib/chain/client";
import { getAddress } from "viem";
import { ANVIL_DEV_ACCOUNTS, getDevAccount } from "@/lib/chain/constants";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { getBalance } from "@/lib/ledger/accounts";
import { formatMicros, parseMicros } from "@/lib/money";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { readUsdcBalance, transferUsdc } from "../helpers/x402-client";

// Dev account 7 is this file's: it pays the CLI's top-ups (no other test file sends from it).
const BUYER = ANVIL_DEV_ACCOUNTS[7];
const TREASURY = getAddress(env.TREASURY_ADDRESS);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const USDC = 1_000_000n;

let upstream: ReferenceUpstream;
let server: RouteServer;
let workDir: string;
let modelId: string;

beforeAll(async () => {
  [upstream, server] = await Promise.all([startReferenceUpstream(), startRouteServer()]);
  workDir = mkdtempSync(path.join(tmpdir(), "svc-agent-cli-"));
  const model = await seedPrivateModel();
  modelId = model.id;
  await seedOffer({
    models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
    priceCents: 80,
    dailyCapacityMicroDiem: 100n * USDC,
    upstreamBaseUrl: upstream.url,
    upstreamApiKey: upstream.apiKey,
  });
});

afterAll(async () => {
  await Promise.all([upstream?.stop(), server?.stop()]);
});

type CliRun = { code: number | null; stdout: string; stderr: string };

/** `npm run agent -- <args>` against the route server, as its own process. */
function cli(args: string[], options: { key?: string; sessionFile: string }): Promise<CliRun> {
  // eslint-disable-next-line no-restricted-properties -- the CLI child inherits the test run's configuration
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["SVC_BASE_URL", "SVC_API_KEY", "SVC_RPC_URL", "SVC_AGENT_PRIVATE_KEY", "SVC_AGENT_SESSION_FILE"])
    delete childEnv[name];
  if (options.key) childEnv.SVC_AGENT_PRIVATE_KEY = options.key;
  const common = ["--base-url", server.url, "--rpc-url", env.BASE_RPC_URL, "--session-file", options.sessionFile];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/agent/main.ts", ...args, ...common], { cwd: ROOT, env: childEnv });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function json<T>(run: CliRun): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`CLI printed no JSON (exit ${run.code}).\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  }
}

type RunOutput = {
  login: { address: string };
  top_up: { credited: string; balance: string; transaction: `0x${string}`; payer: string } | null;
  key: { id: string; key: string };
  completion: {
    id: string;
    generation_id: string;
    answer: string;
    cost: string;
    cost_details: { charge: string; supplier_share: string; platform_fee: string; burn: string; price_cents_per_diem: number };
    price_cents: number;
    burn_diem: string;
    max_cents: number;
    balance_remaining: string;
  };
};
type CliFailure = { error: { code: string; message: string; exit_code: number } & Record<string, unknown> };

const micros = (decimal: string) => parseMicros(decimal.replace(/^-/, "")) as bigint;

describe("npm run agent -- run: the headless agent flow", () => {
  const sessionFile = () => path.join(workDir, "buyer", "session.json");

  it("signs in, tops up over x402, creates a key and completes; the balance drops and the USDC moved on chain", async () => {
    const walletBefore = await readUsdcBalance(BUYER.address);

    const run = await cli(["run", "Hello from the agent CLI", "--model", modelId, "--max-tokens", "64", "--topup-amount", "5", "--json"], {
      key: BUYER.privateKey,
      sessionFile: sessionFile(),
    });

    expect(run.code, run.stderr || run.stdout).toBe(0);
    const out = json<RunOutput>(run);
    expect(out.login.address).toBe(BUYER.address);
    expect(out.completion.id).toMatch(/^chatcmpl-/);
    expect(out.completion.answer).toContain("[reference upstream]");
    expect(out.completion.price_cents).toBe(80);
    expect(out.key.key).toMatch(/^svc_/);

    // The top-up: 5 USDC credited, paid from the buyer's wallet to the treasury in a confirmed transaction.
    expect(out.top_up).toMatchObject({ credited: "5.000000", balance: "5.000000", payer: BUYER.address });
    const receipt = await publicClient.getTransactionReceipt({ hash: out.top_up!.transaction });
    expect(receipt.status).toBe("success");
    expect(await readUsdcBalance(BUYER.address)).toBe(walletBefore - 5n * USDC);
    expect(await readUsdcBalance(TREASURY, receipt.blockNumber)).toBe(
      (await readUsdcBalance(TREASURY, receipt.blockNumber - 1n)) + 5n * USDC,
    );

    // The completion: charged, and the balance after it is lower than after the top-up, in the reply and the ledger.
    const cost = micros(out.completion.cost);
    expect(cost).toBeGreaterThan(0n);
    expect(micros(out.completion.balance_remaining)).toBe(5n * USDC - cost);
    const account = await db.account.findUniqueOrThrow({ where: { walletAddress: BUYER.address } });
    expect((await getBalance("buyer", account.id)).totalMicros).toBe(5n * USDC - cost);
    const clear = await db.clear.findUniqueOrThrow({ where: { completionId: out.completion.id } });
    expect(clear).toMatchObject({ chargeMicros: cost, priceCents: 80 });
    // --json carries the clear's own figures and the generation id.
    expect(out.completion.generation_id).toBe(out.completion.id);
    expect(out.completion.cost_details).toMatchObject({
      charge: out.completion.cost,
      supplier_share: formatMicros(clear.supplierMicros),
      platform_fee: formatMicros(clear.feeMicros),
      burn: formatMicros(clear.burnMicroDiem),
      price_cents_per_diem: 80,
    });

    // The session file holds the cookie, owner-only.
    expect(statSync(sessionFile()).mode & 0o777).toBe(0o600);
    expect(server.requests).toEqual(
      expect.arrayContaining([
        "GET /auth/nonce",
        "POST /auth/verify",
        "POST /v1/x402/top-up",
        "POST /v1/account/api-keys",
        "POST /v1/chat/completions",
      ]),
    );
  }, 90_000);

  it("run again reuses the saved key (no new key), which run created with a daily spend limit, not an unlimited one", async () => {
    const account = await db.account.findUniqueOrThrow({ where: { walletAddress: BUYER.address } });
    const saved = JSON.parse(readFileSync(sessionFile(), "utf8")).profiles[server.url].apiKey as { id: string };
    const keysBefore = await db.apiKey.count({ where: { accountId: account.id } });

    const run = await cli(["run", "Again", "--model", modelId, "--max-tokens", "16", "--json"], {
      key: BUYER.privateKey,
      sessionFile: sessionFile(),
    });

    expect(run.code, run.stderr || run.stdout).toBe(0);
    const out = json<RunOutput & { key: { reused: boolean } }>(run);
    expect(out.key).toMatchObject({ id: saved.id, reused: true });
    expect(out.top_up).toBeNull();
    expect(await db.apiKey.count({ where: { accountId: account.id } })).toBe(keysBefore);
    expect(await db.apiKey.findUniqueOrThrow({ where: { id: saved.id } })).toMatchObject({
      spendLimitMicros: 1_000_000n,
      limitReset: "daily",
      revokedAt: null,
    });
    const completion = await db.completion.findUniqueOrThrow({ where: { id: out.completion.id } });
    expect(completion.apiKeyId).toBe(saved.id);
  }, 90_000);

  it("chat reuses the saved key and prints the answer, then cost, price, burn and balance", async () => {
    const run = await cli(["chat", "Second question", "--model", modelId, "--max-tokens", "32"], { sessionFile: sessionFile() });

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("[reference upstream]");
    expect(run.stdout).toMatch(/cost \d+\.\d{6} USDC · price 80 cents\/diem \(max 100\) · burn \d+\.\d{6} diem · balance \d+\.\d{6} USDC/);
    expect(run.stdout).toMatch(/generation chatcmpl-[A-Za-z0-9]+/);
  }, 60_000);

  it("chat --responses asks through POST /v1/responses: the same answer and cost lines, its generation findable", async () => {
    const text = await cli(["chat", "Fourth question", "--model", modelId, "--max-tokens", "32", "--responses"], {
      sessionFile: sessionFile(),
    });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('[reference upstream] You said: "Fourth question"');
    expect(text.stdout).toMatch(/cost \d+\.\d{6} USDC · price 80 cents\/diem \(max 100\) · burn \d+\.\d{6} diem · balance \d+\.\d{6} USDC/);
    expect(text.stdout).toMatch(/generation chatcmpl-[A-Za-z0-9]+/);

    const run = await cli(["chat", "Fifth question", "--model", modelId, "--max-tokens", "2", "--responses", "--json"], {
      sessionFile: sessionFile(),
    });
    expect(run.code, run.stderr).toBe(0);
    const r = json<{ api: string; id: string; generation_id: string; finish_reason: string; cost: string }>(run);
    expect(r.api).toBe("responses");
    expect(r.id).toBe(`resp_${r.generation_id.slice("chatcmpl-".length)}`);
    expect(r.finish_reason).toBe("incomplete: max_output_tokens");
    expect(r.cost).toBe(formatMicros((await db.clear.findUniqueOrThrow({ where: { completionId: r.generation_id } })).chargeMicros));
  }, 60_000);

  it("chat --stream prints the answer as it streams through /v2, then the same cost line; --responses --stream too", async () => {
    const text = await cli(["chat", "Sixth question", "--model", modelId, "--max-tokens", "32", "--stream"], {
      sessionFile: sessionFile(),
    });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('[reference upstream] You said: "Sixth question"');
    expect(text.stdout).toMatch(/cost \d+\.\d{6} USDC · price 80 cents\/diem \(max 100\) · burn \d+\.\d{6} diem · balance \d+\.\d{6} USDC/);

    for (const flags of [["--stream"], ["--stream", "--responses"]]) {
      const run = await cli(["chat", "Seventh question", "--model", modelId, "--max-tokens", "16", ...flags, "--json"], {
        sessionFile: sessionFile(),
      });
      expect(run.code, run.stderr).toBe(0);
      const r = json<{ generation_id: string; cost: string; balance_remaining: string }>(run);
      const clear = await db.clear.findUniqueOrThrow({ where: { completionId: r.generation_id } });
      expect(r.cost).toBe(formatMicros(clear.chargeMicros));
      expect(r.balance_remaining).toMatch(/^\d+\.\d{6}$/);
    }
  }, 90_000);

  it("generation <id> prints a completion's record with the saved key; --json is the record itself", async () => {
    const chatRun = await cli(["chat", "Third question", "--model", modelId, "--max-tokens", "16", "--json"], {
      sessionFile: sessionFile(),
    });
    expect(chatRun.code, chatRun.stderr).toBe(0);
    const id = json<{ generation_id: string }>(chatRun).generation_id;
    const clear = await db.clear.findUniqueOrThrow({ where: { completionId: id } });

    const text = await cli(["generation", id], { sessionFile: sessionFile() });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`cost ${formatMicros(clear.chargeMicros)} USDC (supplier ${formatMicros(clear.supplierMicros)}`);
    expect(text.stdout).toMatch(/supplier sup_[0-9a-f]{24}/);

    const record = await cli(["generation", id, "--json"], { sessionFile: sessionFile() });
    expect(json<{ id: string; offer_id: string; usage: { cost: number } }>(record)).toMatchObject({
      id,
      offer_id: clear.offerId,
      usage: { cost: Number(formatMicros(clear.chargeMicros)) },
    });
    const missing = await cli(["generation", "not-an-id", "--json"], { sessionFile: sessionFile() });
    expect(missing.code).not.toBe(0);
  }, 60_000);

  it("chat --sort and --only send the provider object: the request goes to the offer it names; a bad sort is a 400 naming it", async () => {
    const model = await seedPrivateModel();
    const [, named] = await Promise.all(
      [80, 90].map((priceCents) =>
        seedOffer({
          models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
          priceCents,
          dailyCapacityMicroDiem: 100n * USDC,
          upstreamBaseUrl: upstream.url,
          upstreamApiKey: upstream.apiKey,
        }),
      ),
    );
    const run = await cli(
      ["chat", "Pick one", "--model", model.id, "--max-tokens", "16", "--sort", "latency", "--only", `${named.id}`, "--json"],
      { sessionFile: sessionFile() },
    );
    expect(run.code, run.stderr).toBe(0);
    const id = json<{ generation_id: string }>(run).generation_id;
    expect((await db.completion.findUniqueOrThrow({ where: { id } })).offerId).toBe(named.id);

    const bad = await cli(["chat", "Pick one", "--model", model.id, "--max-tokens", "16", "--sort", "fastest", "--json"], {
      sessionFile: sessionFile(),
    });
    // A 400 is a usage error (exit 2), by its class.
    expect(bad.code).toBe(2);
    expect(bad.stdout).toContain("provider.sort");
  }, 60_000);

  it("explains a 503 with the X-Svc figures and the max price that would route, exit code 5", async () => {
    const run = await cli(["chat", "Too cheap", "--model", modelId, "--max-cents", "50", "--max-tokens", "32", "--json"], {
      sessionFile: sessionFile(),
    });

    expect(run.code).toBe(5);
    expect(json<CliFailure>(run).error).toMatchObject({
      code: "no_offer_at_or_below_max",
      buyer_max_cents: 50,
      cheapest_posted_cents: 80,
      suggested_max_cents: 80,
      routable_diem_above_max: expect.stringMatching(/^\d+\.\d{6}$/),
    });
    expect(json<CliFailure>(run).error.message).toContain("--max-cents 80");
  }, 60_000);

  it("exits by class: 2 for a request the API refuses as invalid, naming the field; 2 for --max-cents above the key's cap, saying so", async () => {
    const invalid = await cli(["chat", "Hi", "--model", "meta-llama/llama-3.3-70b-instruct", "--json"], { sessionFile: sessionFile() });
    expect(invalid.code).toBe(2);
    expect(json<CliFailure>(invalid).error).toMatchObject({ status: 404, api_code: "model_not_found", exit_code: 2 });
    expect(json<CliFailure>(invalid).error.message).toContain('Did you mean "llama-3.3-70b"?');

    const capped = json<{ id: string; key: string }>(
      await cli(["keys", "create", "--name", "capped", "--max-cents", "90", "--json"], { sessionFile: sessionFile() }),
    );
    const above = await cli(["chat", "Hi", "--model", modelId, "--max-cents", "95", "--api-key", capped.key, "--json"], {
      sessionFile: sessionFile(),
    });
    expect(above.code).toBe(2);
    expect(json<CliFailure>(above).error).toMatchObject({ code: "max_price_above_key_cap", key_max_price_cents: 90 });
    expect(json<CliFailure>(above).error.message).toContain("--max-cents 90 or less");
  }, 120_000);

  it("says the key was revoked (exit 3) after keys revoke", async () => {
    const created = json<{ id: string; key: string }>(
      await cli(["keys", "create", "--name", "short-lived", "--json"], { sessionFile: sessionFile() }),
    );
    const revoke = await cli(["keys", "revoke", created.id, "--json"], { sessionFile: sessionFile() });
    expect(revoke.code, revoke.stdout).toBe(0);
    expect(json<{ revoked_at: string | null }>(revoke).revoked_at).not.toBeNull();

    const run = await cli(["chat", "Anyone there?", "--model", modelId, "--api-key", created.key, "--json"], {
      sessionFile: sessionFile(),
    });
    expect(run.code).toBe(3);
    expect(json<CliFailure>(run).error.code).toBe("api_key_rejected");
  }, 60_000);

  it("gives a key a budget that resets, edits it, and the key describes itself (key: GET /v1/key)", async () => {
    const opts = { sessionFile: sessionFile() };
    const created = json<{ id: string; key: string; limit_reset: string | null; limit_resets_at: string | null }>(
      await cli(["keys", "create", "--name", "daily", "--spend-limit", "2", "--limit-reset", "daily", "--json"], opts),
    );
    expect(created.limit_reset).toBe("daily");
    expect(created.limit_resets_at).not.toBeNull();

    const bad = await cli(["keys", "edit", created.id, "--limit-reset", "hourly", "--json"], opts);
    expect(bad.code).toBe(2);
    expect(json<CliFailure>(bad).error.code).toBe("invalid_limit_reset");
    const edited = await cli(["keys", "edit", created.id, "--spend-limit", "3", "--limit-reset", "weekly", "--json"], opts);
    expect(edited.code, edited.stdout).toBe(0);
    expect(json<{ spend_limit: string; limit_reset: string }>(edited)).toMatchObject({ spend_limit: "3.000000", limit_reset: "weekly" });

    const chat = await cli(["chat", "Hello", "--model", modelId, "--api-key", created.key, "--json"], opts);
    expect(chat.code, chat.stdout).toBe(0);
    const run = await cli(["key", "--api-key", created.key, "--json"], opts);
    expect(run.code, run.stdout).toBe(0);
    const key = json<{ id: string; limit: string; limit_reset: string; limit_remaining: string; usage: string; usage_daily: string }>(run);
    const cost = json<{ cost: string }>(chat).cost;
    expect(key).toMatchObject({ id: created.id, limit: "3.000000", limit_reset: "weekly", usage: cost, usage_daily: cost });
    expect(micros(key.limit_remaining)).toBe(3n * USDC - micros(cost));
    const human = await cli(["key", "--api-key", created.key], opts);
    expect(human.stdout).toContain("weekly");
  }, 60_000);

  it("says the session expired (exit 3) once the server has ended it", async () => {
    const account = await db.account.findUniqueOrThrow({ where: { walletAddress: BUYER.address } });
    await db.session.updateMany({ where: { accountId: account.id, revokedAt: null }, data: { revokedAt: new Date() } });

    const run = await cli(["balance", "--json"], { sessionFile: sessionFile() });
    expect(run.code).toBe(3);
    expect(json<CliFailure>(run).error).toMatchObject({ code: "session_expired", api_code: "session_required" });
    expect(json<CliFailure>(run).error.message).toContain("login");
  }, 60_000);
});

describe("npm run agent -- against a dev deployment, with a wallet that is not one of the dev chain's accounts", () => {
  // A wallet that could be someone's real one: a key of its own, holding test USDC on the local chain.
  const key = generatePrivateKey();
  const wallet = privateKeyToAccount(key);
  const sessionFile = () => path.join(workDir, "not-dev", "session.json");

  it("refuses to ask it for a payment signature (exit 2), saying what the dev chain is and which wallet to use", async () => {
    await transferUsdc(BUYER, wallet.address, 10n * USDC);
    expect((await cli(["login", "--json"], { key, sessionFile: sessionFile() })).code).toBe(0);

    const run = await cli(["topup", "5", "--json"], { key, sessionFile: sessionFile() });

    expect(run.code, run.stdout).toBe(2);
    const { error } = json<CliFailure>(run);
    expect(error).toMatchObject({ code: "dev_wallet_refused", wallet: wallet.address, wallet_usdc: "10" });
    expect(error.message).toContain(`${wallet.address} is not one of the local chain's test accounts`);
    expect(error.message).toContain("reuses Base's chain id and USDC contract, so a payment signed for it is valid on Base too");
    expect(error.message).toContain(`such as the demo buyer ${getDevAccount("demoBuyer").address}`);
    expect(error.message).toContain("Nothing was signed.");
    expect(await db.payment.count({ where: { payer: wallet.address } })).toBe(0);
    expect(await readUsdcBalance(wallet.address)).toBe(10n * USDC);
  }, 60_000);

  it("says how much a completion needs when the balance cannot cover it (402, exit 4)", async () => {
    expect((await cli(["keys", "create", "--json"], { sessionFile: sessionFile() })).code).toBe(0);

    const run = await cli(["chat", "On credit?", "--model", modelId, "--max-tokens", "64", "--json"], { sessionFile: sessionFile() });

    expect(run.code).toBe(4);
    expect(json<CliFailure>(run).error).toMatchObject({
      code: "insufficient_balance",
      available: "0.000000",
      needed: expect.stringMatching(/^\d+\.\d{6}$/),
    });
  }, 60_000);
});

describe("npm run agent -- with a dev account short of test USDC", () => {
  // Dev account 1 is this file's too: it is drained here (no other file uses it).
  const account = ANVIL_DEV_ACCOUNTS[1];
  const sessionFile = () => path.join(workDir, "short", "session.json");
  const sink = privateKeyToAccount(generatePrivateKey()).address;
  const leave = async (micros: bigint) => transferUsdc(account, sink, (await readUsdcBalance(account.address)) - micros);

  it("refuses to pay before signing when it holds less than the amount (exit 4), and nothing is recorded", async () => {
    await leave(2n * USDC);
    expect((await cli(["login", "--json"], { key: account.privateKey, sessionFile: sessionFile() })).code).toBe(0);

    const run = await cli(["topup", "5", "--json"], { key: account.privateKey, sessionFile: sessionFile() });

    expect(run.code).toBe(4);
    expect(json<CliFailure>(run).error).toMatchObject({ code: "wallet_insufficient_usdc", wallet_usdc: "2", needed: "5" });
    expect(json<CliFailure>(run).error.message).toContain("No funds on chain");
    expect(await db.payment.count({ where: { payer: account.address } })).toBe(0);
  }, 60_000);

  it("says it holds no test USDC and names a funded dev account when it holds none (exit 4)", async () => {
    await leave(0n);

    const run = await cli(["topup", "5", "--json"], { key: account.privateKey, sessionFile: sessionFile() });

    expect(run.code).toBe(4);
    const { error } = json<CliFailure>(run);
    expect(error).toMatchObject({ code: "dev_wallet_refused", wallet_usdc: "0" });
    expect(error.message).toContain(`${account.address} holds no test USDC on the local chain`);
    expect(await db.payment.count({ where: { payer: account.address } })).toBe(0);
  }, 60_000);
});
