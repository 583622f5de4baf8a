/**
 * `npm run bench:http`: svc's completion path over real HTTP against a bare forwarder, figures printed, never asserted.
 *
 * Starts, each in its own process: the reference upstream, a bare forwarder (node:http that reads the body, fetches
 * the same upstream once and answers), the same forwarder with one PostgreSQL insert before the fetch and one after
 * (each its own durable commit on a pooled `pg` connection: the floor of any reserve-forward-clear design on this
 * machine, without any of svc's work) and the app (`npm start`'s path: server/main.ts on the existing production
 * build; this script builds nothing, run `npm run build` first). Drives all three with the same load generator
 * (`wrk` when on PATH, else autocannon) and the same body (max_tokens 32) at concurrency 1 and 64, prints rps, p50
 * and p99 per target and svc/forwarder, then checks the ledger invariants and prints clears against 200s.
 *
 * DATABASE_URL must name a PostgreSQL database whose name contains "bench" or "test" (it is wiped).
 * Options: --duration S (per run, default 10) --warmup S (default 2) --concurrency 1,64 --rounds N (default 1)
 * --baseline DIR (below) --reads (readsUnderLoad) --soak N --soak-step S --soak-grow N1,N2 (scripts/bench-soak.ts)
 * --streams (scripts/bench-streaming.ts: /v2 streams beside a bare streaming forwarder) --stream-load N (1000)
 * --stream-sequential N (30) --stream-tokens N (100) --stream-token-delay MS (20)
 *
 * Each run also prints the CPU a request cost the serving process tree and PostgreSQL's backends of the bench
 * databases (scripts/bench-cpu.ts, from /proc): a shared machine's slow spell moves latencies, not CPU per request.
 *
 * On a shared or virtual machine one run's figures move by a millisecond or more at concurrency 1 from one run to
 * the next (measured: svc's p50 between 4.7 and 8.4 ms, same code, same machine, minutes apart). --rounds N runs
 * every target N times, interleaved (round 1 of each, then round 2, ...), so that a slow spell hits all targets
 * alike; the summary gives, per concurrency, the median over rounds of each target's figures and of the per-round
 * svc/forwarder ratio and p50 difference.
 *
 * --baseline DIR also runs the app of another checkout (a `git worktree` of the commit to compare against, with
 * node_modules and its own `npm run build`) on the same PostgreSQL server, upstream and load, as one more target: a
 * change worth less than a millisecond at concurrency 1 cannot be told from run-to-run noise otherwise. It gets a
 * database of its own (DATABASE_URL's name + "_baseline", wiped), migrated and seeded by that checkout's own code, so
 * a change of schema or of a SQL function's signature between the two does not matter.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { benchBackends, cpuPerRequest, readCpu } from "./bench-cpu";
import { runSoak } from "./bench-soak";
import { runStreamingBench, startStreamingForwarder } from "./bench-streaming";
import { seedBenchWorld } from "./bench-world";
import { migrateDatabase } from "../server/migrate";
import { resetTestDatabase } from "./migrate";
import { freePort, waitFor } from "./process-utils";

const { values: opts } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    concurrency: { type: "string", default: "1,64" },
    rounds: { type: "string", default: "1" },
    /** Write a V8 CPU profile of the app (and its tsx launcher) into this directory. */
    profile: { type: "string" },
    /** The load generator: wrk (default when on PATH) or autocannon. */
    tool: { type: "string" },
    /** Only the targets whose name contains this (e.g. "svc"). */
    only: { type: "string" },
    /** Another checkout whose app runs as one more target (see the top of this file). */
    baseline: { type: "string" },
    /** Reads under load: the cached market reads while completions run at c=64 (see readsUnderLoad). */
    reads: { type: "boolean", default: false },
    /** Soak mode: this many completions against svc alone, in steps (see runSoak). */
    soak: { type: "string" },
    "soak-step": { type: "string", default: "100000" },
    /** Soak: history sizes (completions, comma-separated) to grow to by cloning settled rows, one after each step. */
    "soak-grow": { type: "string", default: "" },
    /** Streaming mode: svc's /v2 streams beside a bare streaming forwarder (scripts/bench-streaming.ts). */
    streams: { type: "boolean", default: false },
    "stream-load": { type: "string", default: "1000" },
    "stream-sequential": { type: "string", default: "30" },
    "stream-tokens": { type: "string", default: "100" },
    "stream-token-delay": { type: "string", default: "20" },
  },
});
const DURATION_S = Number(opts.duration);
const WARMUP_S = Number(opts.warmup);
const CONCURRENCIES = opts.concurrency.split(",").map(Number);
const ROUNDS = Math.max(1, Number(opts.rounds));

// eslint-disable-next-line no-restricted-properties -- a launcher: it configures the processes it starts
const env = process.env;
const children: ChildProcess[] = [];

/** `pid`: the process (tree) serving the target, whose CPU per request is measured. */
type Target = { name: string; url: string; method: "GET" | "POST"; headers: Record<string, string>; body?: string; pid?: number };
type Figures = { rps: number; p50Ms: number; p99Ms: number; requests: number; non2xx: number; errors: number };
/** A run's figures with the CPU its requests cost the server and PostgreSQL (µs each; null without /proc). */
type RunFigures = Figures & { serverCpuUs: number | null; postgresCpuUs: number | null };

const FORWARDER = `
const http = require("node:http");
const [port, upstream, key, databaseUrl] = process.argv.slice(1);
const pool = databaseUrl ? new (require("pg").Pool)({ connectionString: databaseUrl, max: 3 }) : null;
const commit = (v) => pool?.query({ name: "floor", text: "INSERT INTO bench_floor (v) VALUES ($1)", values: [v] });
http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    try {
      await commit("before");
      const r = await fetch(upstream + "/chat/completions", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer " + key }, body: Buffer.concat(chunks) });
      const body = Buffer.from(await r.arrayBuffer());
      await commit("after");
      res.writeHead(r.status, { "content-type": "application/json", "content-length": body.length }).end(body);
    } catch { res.writeHead(502).end(); }
  });
}).listen(Number(port), "127.0.0.1");
`;

/** Each child's stderr goes to a file (wrk's abandoned connections make the app log aborted requests). */
function start(name: string, command: string, args: string[], childEnv: NodeJS.ProcessEnv, cwd?: string): ChildProcess {
  const logFile = join(workDir, `${name.replace(/\W+/g, "_")}.log`);
  const child = spawn(command, args, { env: childEnv, cwd, stdio: ["ignore", "ignore", openSync(logFile, "w")] });
  child.once("exit", (code, signal) => {
    if (!stopping) console.error(`[bench:http] ${name} exited (${code ?? signal}); its stderr: ${logFile}`);
  });
  children.push(child);
  return child;
}

let stopping = false;
const workDir = mkdtempSync(join(tmpdir(), "svc-bench-http-"));
async function stopAll() {
  stopping = true;
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 5000).unref();
        }),
    ),
  );
}

function hasWrk(): boolean {
  if (opts.tool) return opts.tool === "wrk";
  return spawnSync("wrk", ["--version"], { stdio: "ignore" }).error === undefined;
}

/** wrk with a Lua script carrying the method, headers and body; --latency gives the percentiles. */
function wrkArgs(target: Target, connections: number, seconds: number): string[] {
  const lua = join(workDir, `${target.name.replace(/\W+/g, "_")}.lua`);
  const lines = [`wrk.method = ${JSON.stringify(target.method)}`];
  const threads = Math.min(2, connections);
  for (const [k, v] of Object.entries(target.headers)) lines.push(`wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  if (target.body !== undefined) lines.push(`wrk.body = ${JSON.stringify(target.body)}`);
  writeFileSync(lua, lines.join("\n") + "\n");
  // A long timeout: a slow answer is a latency, not a socket error (and it is cleared either way).
  return ["-t", String(threads), "-c", String(connections), "-d", `${seconds}s`, "--timeout", "30s", "--latency", "-s", lua, target.url];
}

function runWrk(target: Target, connections: number, seconds: number): Figures {
  const out = spawnSync("wrk", wrkArgs(target, connections, seconds), { encoding: "utf8" });
  if (out.status !== 0) throw new Error(`wrk failed: ${out.stderr}`);
  return parseWrk(out.stdout);
}

/** wrk for a duration without blocking this process (two loads at once: --reads). */
async function runWrkAsync(target: Target, connections: number, seconds: number): Promise<Figures> {
  const started = performance.now();
  return runWrkUntil(target, connections, async () => performance.now() - started >= seconds * 1000);
}

/**
 * A second client beside the load generator: one request at a time on one keep-alive connection, as a person's
 * browser asks, each latency measured here; p50 and p99 over `seconds`.
 */
async function probeSequentially(
  url: string,
  seconds: number,
): Promise<{ requests: number; p50Ms: number; p99Ms: number; maxMs: number; failures: number }> {
  const { Agent, request } = await import("node:http");
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let failures = 0;
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const started = performance.now();
    const status = await new Promise<number>((resolve) => {
      const req = request(url, { agent }, (res) => {
        res.resume();
        res.once("end", () => resolve(res.statusCode ?? 0));
      });
      req.once("error", () => resolve(0));
      req.end();
    });
    latencies.push(performance.now() - started);
    if (status !== 200) failures++;
  }
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { requests: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted[sorted.length - 1], failures };
}

/**
 * --reads: the cached market reads while completions run at c=64 (wrk), asked two ways at once: by a second wrk at
 * c=64 (what the issue asks; wrk's own p99 includes its connections' wait for a saturated server) and by a second
 * client one request at a time (what a person's page sees). Then the same reads without completions, for scale.
 */
async function readsUnderLoad(svc: Target, reads: Target[], seconds: number): Promise<void> {
  console.log(`\nreads under load (${seconds} s each; completions by wrk at c=64 throughout)`);
  for (const read of reads) {
    const completions = runWrkAsync(svc, 64, seconds + 2);
    await new Promise((r) => setTimeout(r, 1000));
    const [readFigures, probe] = await Promise.all([runWrkAsync(read, 64, seconds - 1), probeSequentially(read.url, seconds - 1)]);
    const c = await completions;
    console.log(figuresLine(`${read.name} (wrk c=64)`, 64, { ...readFigures, serverCpuUs: null, postgresCpuUs: null }));
    console.log(
      `${`${read.name} (second client, 1 at a time)`.padEnd(34)}       ${String(probe.requests).padStart(6)} req  p50 ${probe.p50Ms.toFixed(2).padStart(7)} ms  p99 ${probe.p99Ms.toFixed(2).padStart(7)} ms  max ${probe.maxMs.toFixed(0)} ms${probe.failures ? `  (${probe.failures} failed)` : ""}`,
    );
    console.log(figuresLine("  completions meanwhile", 64, { ...c, serverCpuUs: null, postgresCpuUs: null }));
    const alone = await probeSequentially(read.url, 3);
    console.log(
      `${"  the second client, no load".padEnd(34)}       ${String(alone.requests).padStart(6)} req  p50 ${alone.p50Ms.toFixed(2).padStart(7)} ms  p99 ${alone.p99Ms.toFixed(2).padStart(7)} ms`,
    );
  }
}

/**
 * wrk until `done()` says so (asked every half second), then SIGINT, on which wrk stops and prints its figures
 * as at the end of a run; the rate is over the time it actually ran.
 */
async function runWrkUntil(target: Target, connections: number, done: () => Promise<boolean>): Promise<Figures> {
  const child = spawn("wrk", wrkArgs(target, connections, 7 * 24 * 3600), { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const started = performance.now();
  let stopped = false;
  while (!stopped) {
    const ended = await Promise.race([exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 500))]);
    if (ended) throw new Error(`wrk ended on its own: ${stderr}${stdout}`);
    if (await done()) {
      child.kill("SIGINT");
      stopped = true;
    }
  }
  await exited;
  const figures = parseWrk(stdout);
  return { ...figures, rps: figures.requests / ((performance.now() - started) / 1000) };
}

function toMs(value: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
}

function parseWrk(text: string): Figures {
  const pick = (re: RegExp) => re.exec(text)?.[1];
  const requests = Number(pick(/(\d+) requests in/) ?? 0);
  const non2xx = Number(pick(/Non-2xx or 3xx responses: (\d+)/) ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const errors = socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return {
    rps: Number(pick(/Requests\/sec:\s+([\d.]+)/) ?? 0),
    p50Ms: toMs(pick(/\s50%\s+(\S+)/) ?? ""),
    p99Ms: toMs(pick(/\s99%\s+(\S+)/) ?? ""),
    requests,
    non2xx,
    errors,
  };
}

/** autocannon (a devDependency) when wrk is not installed. */
async function runAutocannon(target: Target, connections: number, seconds: number): Promise<Figures> {
  const { default: autocannon } = (await import("autocannon" as string)) as { default: (o: object) => Promise<AutocannonResult> };
  const r = await autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    body: target.body,
    connections,
    duration: seconds,
  });
  return {
    rps: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
  };
}
type AutocannonResult = {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
};

async function load(target: Target, connections: number, seconds: number): Promise<Figures> {
  return hasWrk() ? runWrk(target, connections, seconds) : runAutocannon(target, connections, seconds);
}

const FLOOR = "forwarder + 2 commits (floor)";
const SVC = "svc POST /v1/chat/completions";
const BASELINE = "svc POST (--baseline checkout)";

/**
 * Starts `npm start`'s path (server/main.ts on the checkout's production build) in `dir`, against the wiped
 * database and without rate limits; answers its URL once it serves GET /v1/models.
 */
async function startApp(name: string, dir: string, databaseUrl: string, profileDir?: string): Promise<{ url: string; pid?: number }> {
  const port = await freePort();
  const tsx = [join(dir, "node_modules/tsx/dist/cli.mjs")];
  // With --profile the app runs in this node directly (tsx as a loader) so that --cpu-prof applies to it.
  const launcher = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--import", "tsx"] : tsx;
  // A baseline checkout from before the server moved to server/ keeps it in scripts/.
  const entry = existsSync(join(dir, "server/main.ts"))
    ? ["./server/server-modules.mjs", "server/main.ts"]
    : ["./scripts/server-modules.mjs", "scripts/server.ts"];
  const args = [...launcher, "--import", entry[0], entry[1], "--port", String(port), "--hostname", "127.0.0.1"];
  const child = start(
    name,
    process.execPath,
    args,
    {
      ...env,
      DATABASE_URL: databaseUrl,
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      SVC_ENV: "test",
      SVC_ORIGIN: `http://127.0.0.1:${port}`,
      RATE_LIMIT_PER_KEY_PER_MINUTE: "100000000",
      RATE_LIMIT_PER_IP_PER_MINUTE: "100000000",
      // One load generator on one address with one key: its streams and connections are not a buyer's to cap here.
      STREAMS_PER_KEY: "100000",
      STREAMS_PER_ACCOUNT: "100000",
      HTTP_MAX_CONNECTIONS_PER_CLIENT: "100000",
    },
    dir,
  );
  const url = `http://127.0.0.1:${port}`;
  // Not /healthz: it also probes the chain, which this bench does not start.
  await waitFor(
    `${name} to answer GET /v1/models (did you run \`npm run build\` in ${dir}?)`,
    120_000,
    async () => (await fetch(`${url}/v1/models`).catch(() => null))?.status === 200,
  );
  return { url, pid: child.pid };
}

/**
 * The baseline checkout's own database: wiped, migrated by that checkout (its deploy step, server/migrate.ts, which
 * also installs prisma/functions/, or scripts/migrate.ts in the few commits that had it there; before both, `prisma
 * migrate deploy`) and seeded by its own bench world. Answers the buyer's API key there.
 */
async function prepareBaselineDatabase(
  dir: string,
  url: string,
  world: { url: string; apiKey: string; dailyCapacityMicroDiem: bigint },
): Promise<string> {
  await resetTestDatabase(url);
  const childEnv = { ...env, DATABASE_URL: url, CHECKPOINT_DISABLE: "1", PRISMA_HIDE_UPDATE_MESSAGE: "1" };
  const tsx = join(dir, "node_modules/tsx/dist/cli.mjs");
  const migrate = existsSync(join(dir, "server/sql-functions.ts"))
    ? [tsx, "server/migrate.ts"]
    : existsSync(join(dir, "scripts/sql-functions.ts"))
      ? [tsx, "scripts/migrate.ts"]
      : [join(dir, "node_modules/prisma/build/index.js"), "migrate", "deploy"];
  const run = (args: string[]) => {
    const result = spawnSync(process.execPath, args, { cwd: dir, env: childEnv, encoding: "utf8" });
    if (result.status !== 0) throw new Error(`baseline: ${args.join(" ")} failed:\n${result.stdout}${result.stderr}`);
    return result.stdout;
  };
  run(migrate);
  const loader = existsSync(join(dir, "server/server-modules.mjs")) ? "./server/server-modules.mjs" : "./scripts/server-modules.mjs";
  const keyFile = join(workDir, "baseline-key.json");
  const seed = `import { seedBenchWorld } from "./scripts/bench-world.ts";
    const { writeFileSync } = await import("node:fs");
    const [url, apiKey, capacity, out] = process.argv.slice(2);
    const { key } = await seedBenchWorld({ url, apiKey, dailyCapacityMicroDiem: BigInt(capacity) });
    writeFileSync(out, JSON.stringify({ key }));
    process.exit(0);`;
  const seedFile = join(dir, `.bench-baseline-seed-${process.pid}.ts`);
  writeFileSync(seedFile, seed);
  try {
    run([tsx, "--import", loader, seedFile, world.url, world.apiKey, String(world.dailyCapacityMicroDiem), keyFile]);
  } finally {
    (await import("node:fs")).rmSync(seedFile, { force: true });
  }
  return (JSON.parse(readFileSync(keyFile, "utf8")) as { key: string }).key;
}

/** The floor forwarder's table: one row per commit, nothing else in it (the database is wiped by the next run). */
async function createFloorTable(url: string): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("CREATE TABLE bench_floor (id bigserial PRIMARY KEY, v text NOT NULL, at timestamptz NOT NULL DEFAULT now())");
  } finally {
    await client.end();
  }
}

function figuresLine(name: string, c: number, f: Pick<RunFigures, "rps" | "p50Ms" | "p99Ms" | "serverCpuUs" | "postgresCpuUs">): string {
  const us = (x: number | null) => (x === null ? "n/a" : x.toFixed(0)).padStart(5);
  return (
    `${name.padEnd(34)} c=${String(c).padStart(2)}  ${f.rps.toFixed(0).padStart(6)} rps  p50 ${f.p50Ms.toFixed(2).padStart(7)} ms  p99 ${f.p99Ms.toFixed(2).padStart(7)} ms` +
    `  cpu/req: server ${us(f.serverCpuUs)} µs, postgres ${us(f.postgresCpuUs)} µs`
  );
}

/** One measured run, with the CPU its requests cost the serving process tree and PostgreSQL. */
async function measure(target: Target, connections: number, seconds: number): Promise<RunFigures> {
  const { db } = await import("../lib/db/client");
  const backends = () => benchBackends((sql) => db.$queryRawUnsafe<{ pid: number }[]>(sql));
  const backendsBefore = await backends();
  const before = readCpu();
  const f = await load(target, connections, seconds);
  const after = readCpu();
  for (const pid of await backends()) backendsBefore.add(pid);
  const cpu = cpuPerRequest(before, after, target.pid, f.requests, backendsBefore);
  return { ...f, serverCpuUs: cpu?.serverUs ?? null, postgresCpuUs: cpu?.postgresUs ?? null };
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
  const url = env.DATABASE_URL;
  if (!url || !/bench|test/.test(new URL(url).pathname)) {
    throw new Error("Set DATABASE_URL to a PostgreSQL database whose name contains 'bench' or 'test' (it is wiped).");
  }
  await resetTestDatabase(url);
  await migrateDatabase(url);

  const tsx = ["node_modules/tsx/dist/cli.mjs"];
  const upstreamPort = await freePort();
  const upstreamKey = "bench-upstream-key";
  const upstream = start(
    "reference upstream",
    process.execPath,
    [
      ...tsx,
      "scripts/reference-upstream/main.ts",
      "--port",
      String(upstreamPort),
      "--api-key",
      upstreamKey,
      // Streaming mode: long replies, paced as a model generates them.
      ...(opts.streams ? ["--mode", `long:${opts["stream-tokens"]}`, "--token-delay", opts["stream-token-delay"]] : []),
    ],
    env,
  );
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}/v1`;
  await waitFor("the reference upstream", 30_000, async () => (await fetch(`${upstreamUrl}/models`).catch(() => null)) !== null);

  const forwarderPort = await freePort();
  const forwarder = start("bare forwarder", process.execPath, ["-e", FORWARDER, String(forwarderPort), upstreamUrl, upstreamKey], env);
  await createFloorTable(url);
  const floorPort = await freePort();
  const floor = start("forwarder + 2 commits", process.execPath, ["-e", FORWARDER, String(floorPort), upstreamUrl, upstreamKey, url], env);

  Object.assign(env, { ALLOW_PRIVATE_UPSTREAMS: "true", LOG_LEVEL: "error" });
  const { db } = await import("../lib/db/client");
  const { checkLedgerInvariants } = await import("../lib/ledger/invariants");
  const world = { url: upstreamUrl, apiKey: upstreamKey, dailyCapacityMicroDiem: 1_000_000_000_000_000n };
  const { key } = await seedBenchWorld(world);

  const app = await startApp("app (server/main.ts)", process.cwd(), url, opts.profile);
  const appUrl = app.url;
  let baseline: { url: string; key: string; pid?: number } | undefined;
  if (opts.baseline) {
    const dir = resolve(opts.baseline);
    const baselineDb = new URL(url);
    baselineDb.pathname = `${baselineDb.pathname}_baseline`;
    const baselineKey = await prepareBaselineDatabase(dir, baselineDb.toString(), world);
    baseline = { ...(await startApp("baseline app", dir, baselineDb.toString())), key: baselineKey };
  }

  const messages = [{ role: "user", content: "Say something short about benchmarks." }];
  const json = { "content-type": "application/json" };
  const targets: Target[] = [
    {
      name: "reference upstream directly",
      url: `${upstreamUrl}/chat/completions`,
      method: "POST",
      headers: { ...json, authorization: `Bearer ${upstreamKey}` },
      body: JSON.stringify({ model: "llama-3.3-70b", messages, max_tokens: 32 }),
      pid: upstream.pid,
    },
    {
      name: "bare forwarder",
      url: `http://127.0.0.1:${forwarderPort}/`,
      method: "POST",
      headers: json,
      body: JSON.stringify({ model: "llama-3.3-70b", messages, max_tokens: 32 }),
      pid: forwarder.pid,
    },
    {
      name: FLOOR,
      url: `http://127.0.0.1:${floorPort}/`,
      method: "POST",
      headers: json,
      body: JSON.stringify({ model: "llama-3.3-70b", messages, max_tokens: 32 }),
      pid: floor.pid,
    },
    {
      name: SVC,
      url: `${appUrl}/v1/chat/completions`,
      method: "POST",
      headers: { ...json, authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "llama-3.3-70b", messages, max_tokens: 32 }),
      pid: app.pid,
    },
    { name: "svc GET /v1/models (for scale)", url: `${appUrl}/v1/models`, method: "GET", headers: {}, pid: app.pid },
  ];
  if (baseline) {
    const svc = targets.find((t) => t.name === SVC)!;
    const headers = { ...svc.headers, authorization: `Bearer ${baseline.key}` };
    targets.splice(targets.indexOf(svc) + 1, 0, {
      ...svc,
      name: BASELINE,
      url: `${baseline.url}/v1/chat/completions`,
      headers,
      pid: baseline.pid,
    });
  }
  for (const t of targets.filter((t) => t.method === "POST")) {
    const res = await fetch(t.url, { method: t.method, headers: t.headers, body: t.body });
    if (res.status !== 200) throw new Error(`${t.name} answered ${res.status}: ${await res.text()}`);
  }

  if (opts.streams) {
    const streamingPort = await freePort();
    startStreamingForwarder(start, streamingPort, upstreamUrl, upstreamKey, env);
    await waitFor(
      "the streaming forwarder",
      30_000,
      async () => (await fetch(`http://127.0.0.1:${streamingPort}/`).catch(() => null)) !== null,
    );
    await runStreamingBench({
      upstreamUrl,
      upstreamKey,
      forwarderUrl: `http://127.0.0.1:${streamingPort}/`,
      svcUrl: appUrl,
      svcKey: key,
      svcPid: app.pid,
      model: "llama-3.3-70b",
      sequential: Number(opts["stream-sequential"]),
      load: Number(opts["stream-load"]),
      tokens: Number(opts["stream-tokens"]),
      tokenDelayMs: Number(opts["stream-token-delay"]),
      countClears: (ids) => db.clear.count({ where: { completionId: { in: ids } } }),
    });
    const report = await checkLedgerInvariants();
    console.log(report.ok ? "ledger invariants: hold" : `ledger invariants VIOLATED:\n- ${report.violations.join("\n- ")}`);
    await db.$disconnect();
    return;
  }
  if (opts.reads) {
    const read = (path: string): Target => ({ name: `svc GET ${path}`, url: `${appUrl}${path}`, method: "GET", headers: {}, pid: app.pid });
    await readsUnderLoad(
      targets.find((t) => t.name === SVC)!,
      [read("/v1/models"), read("/v1/market/models")],
      DURATION_S,
    );
    await db.$disconnect();
    return;
  }
  if (opts.soak) {
    if (!hasWrk()) throw new Error("--soak needs wrk (Debian's `wrk` package): it stops after a number of answers.");
    const svc = targets.find((t) => t.name === SVC)!;
    const connections = Math.max(...CONCURRENCIES);
    await runSoak({
      databaseUrl: url,
      appPid: app.pid,
      connections,
      total: Number(opts.soak),
      step: Number(opts["soak-step"]),
      grow: opts["soak-grow"] ? opts["soak-grow"].split(",").map(Number) : [],
      load: (done) => runWrkUntil(svc, connections, done),
    });
    await new Promise((r) => setTimeout(r, 2000));
    const report = await checkLedgerInvariants();
    console.log(report.ok ? "\nledger invariants: hold" : `\nledger invariants VIOLATED:\n- ${report.violations.join("\n- ")}`);
    await db.$disconnect();
    return;
  }

  const tool = hasWrk() ? "wrk" : "autocannon";
  const [load1] = (await import("node:os")).loadavg();
  console.log(
    `\nsvc bench:http — ${tool}, ${DURATION_S} s per run after ${WARMUP_S} s warm-up, ${ROUNDS} round(s), node ${process.version}, load average before: ${load1.toFixed(2)}\n`,
  );
  /** Per round, each target's figures by `${name}@${c}`. */
  const rounds: Map<string, RunFigures>[] = [];
  let svc200 = 1; // the probe above
  /** Each wrk run may end with up to its concurrency of svc requests answered and cleared but not counted. */
  let uncountedAtMost = 0;
  const svcRuns: { c: number; from: Date; to: Date }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    if (ROUNDS > 1) console.log(`round ${round}`);
    const results = new Map<string, RunFigures>();
    rounds.push(results);
    for (const target of targets) {
      if (opts.only && !target.name.includes(opts.only)) continue;
      for (const c of CONCURRENCIES) {
        if (target.method === "GET" && c === 1) continue;
        // The clears counted below are this checkout's database's: the baseline clears into its own.
        const isSvc = target.name === SVC;
        if (isSvc) uncountedAtMost += WARMUP_S > 0 ? 2 * c : c;
        if (WARMUP_S > 0) await load(target, c, WARMUP_S).then((f) => isSvc && (svc200 += f.requests - f.non2xx));
        const runStart = new Date();
        const f = await measure(target, c, DURATION_S);
        if (isSvc) {
          svc200 += f.requests - f.non2xx;
          svcRuns.push({ c, from: runStart, to: new Date() });
        }
        results.set(`${target.name}@${c}`, f);
        console.log(figuresLine(target.name, c, f) + (f.non2xx || f.errors ? `  (${f.non2xx} non-2xx, ${f.errors} socket errors)` : ""));
      }
    }
    console.log("");
  }
  if (ROUNDS > 1) {
    console.log(`median of ${ROUNDS} rounds`);
    for (const target of targets) {
      for (const c of CONCURRENCIES) {
        const runs = rounds.map((r) => r.get(`${target.name}@${c}`)).filter((f): f is RunFigures => f !== undefined);
        if (runs.length === 0) continue;
        const orNull = (xs: (number | null)[]) => (xs.every((x) => x !== null) ? median(xs as number[]) : null);
        const f = {
          rps: median(runs.map((r) => r.rps)),
          p50Ms: median(runs.map((r) => r.p50Ms)),
          p99Ms: median(runs.map((r) => r.p99Ms)),
          serverCpuUs: orNull(runs.map((r) => r.serverCpuUs)),
          postgresCpuUs: orNull(runs.map((r) => r.postgresCpuUs)),
        };
        console.log(figuresLine(target.name, c, f));
      }
    }
    console.log("");
  }
  const spread = (xs: number[], digits: number) => (xs.length > 1 ? ` (rounds: ${xs.map((x) => x.toFixed(digits)).join(", ")})` : "");
  for (const c of CONCURRENCIES) {
    const baselines = rounds.map((r) => ({ svc: r.get(`${SVC}@${c}`), base: r.get(`${BASELINE}@${c}`) })).filter((p) => p.svc && p.base);
    if (baselines.length > 0) {
      const baseRatios = baselines.map((p) => p.svc!.rps / p.base!.rps);
      const baseDiffs = baselines.map((p) => p.svc!.p50Ms - p.base!.p50Ms);
      console.log(
        `c=${c}: svc/baseline ${median(baseRatios).toFixed(3)}x rps${spread(baseRatios, 3)}; p50 svc - baseline ${median(baseDiffs).toFixed(2)} ms${spread(baseDiffs, 2)}`,
      );
    }
    const pairs = rounds
      .map((r) => ({ svc: r.get(`${SVC}@${c}`), fwd: r.get(`bare forwarder@${c}`) }))
      .filter((p): p is { svc: RunFigures; fwd: RunFigures } => p.svc !== undefined && p.fwd !== undefined);
    if (pairs.length === 0) continue;
    const ratios = pairs.map((p) => p.svc.rps / p.fwd.rps);
    const diffs = pairs.map((p) => p.svc.p50Ms - p.fwd.p50Ms);
    console.log(
      `c=${c}: svc/forwarder ${median(ratios).toFixed(3)}x rps${spread(ratios, 3)}; p50 svc - forwarder ${median(diffs).toFixed(2)} ms${spread(diffs, 2)}`,
    );
    const floors = rounds
      .map((r) => ({ floor: r.get(`${FLOOR}@${c}`), fwd: r.get(`bare forwarder@${c}`) }))
      .filter((p) => p.floor && p.fwd);
    if (floors.length > 0) {
      const floorDiffs = floors.map((p) => p.floor!.p50Ms - p.fwd!.p50Ms);
      console.log(
        `c=${c}: p50 (forwarder + 2 commits) - forwarder ${median(floorDiffs).toFixed(2)} ms${spread(floorDiffs, 2)}: the part of svc's difference any reserve-forward-clear design pays here`,
      );
    }
    // CPU per request above the bare forwarder's: what a slow spell cannot move (median over rounds, µs).
    const cpuAbove = (name: string) => {
      const server: number[] = [];
      const postgres: number[] = [];
      for (const r of rounds) {
        const t = r.get(`${name}@${c}`);
        const fwd = r.get(`bare forwarder@${c}`);
        if (t?.serverCpuUs == null || fwd?.serverCpuUs == null || t.postgresCpuUs == null || fwd.postgresCpuUs == null) continue;
        server.push(t.serverCpuUs - fwd.serverCpuUs);
        postgres.push(t.postgresCpuUs - fwd.postgresCpuUs);
      }
      return server.length ? `server +${median(server).toFixed(0)} µs, postgres +${median(postgres).toFixed(0)} µs` : null;
    };
    const cpuLines = [SVC, BASELINE, FLOOR].map((name) => [name, cpuAbove(name)] as const).filter(([, v]) => v !== null);
    if (cpuLines.length > 0) console.log(`c=${c}: cpu/req above the forwarder's: ${cpuLines.map(([n, v]) => `${n}: ${v}`).join("; ")}`);
  }

  // Requests wrk abandoned at the end of a run may still be answered and cleared: let them finish first.
  await new Promise((r) => setTimeout(r, 2000));
  const [{ clears }] = await db.$queryRaw<{ clears: bigint }[]>`SELECT COUNT(*) AS clears FROM clears`;
  const [{ active }] = await db.$queryRaw<{ active: bigint }[]>`SELECT COUNT(*) AS active FROM holds WHERE status = 'active'`;
  // Group commit at work: every row of one batch statement carries the statement's timestamp, so distinct timestamps
  // count the statements (at least: two batches in the same millisecond count as one).
  for (const run of svcRuns) {
    const [r] = await db.$queryRaw<{ holds: bigint; reserve_batches: bigint }[]>`
      SELECT COUNT(*) AS holds, COUNT(DISTINCT created_at) AS reserve_batches FROM holds WHERE created_at BETWEEN ${run.from} AND ${run.to}`;
    const [k] = await db.$queryRaw<{ clears: bigint; clear_batches: bigint }[]>`
      SELECT COUNT(*) AS clears, COUNT(DISTINCT created_at) AS clear_batches FROM clears WHERE created_at BETWEEN ${run.from} AND ${run.to}`;
    const mean = (n: bigint, d: bigint) => (d > 0n ? (Number(n) / Number(d)).toFixed(1) : "-");
    console.log(
      `c=${run.c}: ${r.holds} reservations in ${r.reserve_batches} statements (${mean(r.holds, r.reserve_batches)} per statement), ` +
        `${k.clears} clears in ${k.clear_batches} statements (${mean(k.clears, k.clear_batches)} per statement)`,
    );
  }
  const report = await checkLedgerInvariants();
  const extra = Number(clears) - svc200;
  console.log(
    `\nclears ${clears} vs 200s counted by ${tool} ${svc200}: ${extra >= 0 && extra <= uncountedAtMost ? "consistent" : "MISMATCH"} ` +
      `(each run's last in-flight requests are cleared but not counted, so clears may exceed by up to ${uncountedAtMost}, ` +
      `the runs' concurrencies summed); active holds ${active}`,
  );
  console.log(report.ok ? "ledger invariants: hold" : `ledger invariants VIOLATED:\n- ${report.violations.join("\n- ")}`);
  await db.$disconnect();
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
