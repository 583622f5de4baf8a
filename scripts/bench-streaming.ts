/**
 * `npm run bench:http -- --streams`: svc's streaming surface (POST /v2/chat/completions, stream: true) beside a bare
 * streaming forwarder, in one run, against the same paced reference upstream. Figures printed, never asserted:
 *
 * - at concurrency 1, time to the first content delta through each, and svc's v1 added latency (a JSON completion
 *   through svc against the bare forwarder) for scale: only the reservation stands before a stream's first byte;
 * - the gaps between content deltas as the client sees them (p50/p99): the relay's cost per chunk is svc's minus the
 *   forwarder's;
 * - many slow streams at once through svc (--stream-load, default 1000): the app's peak RSS (its process tree, from
 *   /proc) and GET /healthz asked one at a time meanwhile (p50/p99/max), then that every stream cleared once.
 */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { Agent, request } from "node:http";

export const STREAMING_FORWARDER = `
const http = require("node:http");
const [port, upstream, key] = process.argv.slice(1);
http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    try {
      const r = await fetch(upstream + "/chat/completions", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer " + key }, body: Buffer.concat(chunks), signal: abort.signal });
      res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "text/event-stream" });
      for await (const chunk of r.body) if (!res.write(chunk)) await new Promise((ok) => res.once("drain", ok));
      res.end();
    } catch { if (!res.headersSent) res.writeHead(502); res.end(); }
  });
}).listen(Number(port), "127.0.0.1");
`;

type StreamTiming = { headersMs: number; firstContentMs: number; totalMs: number; gapsMs: number[]; ok: boolean; id: string | null };

/** One streamed request, read to its end: the time to its first content delta, the gaps between deltas. */
export function timeStream(url: string, headers: Record<string, string>, body: string, agent: Agent): Promise<StreamTiming> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { method: "POST", agent, headers: { ...headers, "content-length": Buffer.byteLength(body) } }, (res) => {
      const timing: StreamTiming = {
        headersMs: performance.now() - started,
        firstContentMs: NaN,
        totalMs: NaN,
        gapsMs: [],
        ok: res.statusCode === 200,
        id: (res.headers["x-svc-generation-id"] as string | undefined) ?? null,
      };
      let tail = "";
      let last = 0;
      res.setEncoding("utf8");
      res.on("data", (text: string) => {
        const events = (tail + text).split("\n\n");
        tail = events.pop()!;
        const now = performance.now();
        for (const event of events) {
          if (!/"content":"[^"]/.test(event)) continue;
          if (Number.isNaN(timing.firstContentMs)) timing.firstContentMs = now - started;
          else timing.gapsMs.push(now - last);
          last = now;
        }
      });
      res.on("end", () => resolve({ ...timing, totalMs: performance.now() - started }));
      res.on("error", () => resolve({ ...timing, ok: false }));
    });
    req.on("error", () => resolve({ headersMs: NaN, firstContentMs: NaN, totalMs: NaN, gapsMs: [], ok: false, id: null }));
    req.end(body);
  });
}

/** One JSON request: its latency. */
function timeJson(url: string, headers: Record<string, string>, body: string, agent: Agent): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { method: "POST", agent, headers: { ...headers, "content-length": Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on("end", () => resolve(performance.now() - started));
    });
    req.on("error", () => resolve(NaN));
    req.end(body);
  });
}

function at(xs: number[], q: number): number {
  const sorted = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** The resident memory of a process and its descendants, MiB (from /proc). */
export function treeRssMiB(root: number): number {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone
    }
  }
  const tree = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (tree.has(ppid) && !tree.has(pid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  let kib = 0;
  for (const pid of tree) {
    try {
      const line = readFileSync(`/proc/${pid}/status`, "utf8")
        .split("\n")
        .find((l) => l.startsWith("VmRSS:"));
      kib += line ? Number(line.split(/\s+/)[1]) : 0;
    } catch {
      // gone
    }
  }
  return kib / 1024;
}

const ms = (x: number) => (Number.isNaN(x) ? "    n/a" : x.toFixed(2).padStart(7));

export async function runStreamingBench(input: {
  upstreamUrl: string;
  upstreamKey: string;
  forwarderUrl: string;
  svcUrl: string;
  svcKey: string;
  svcPid: number | undefined;
  model: string;
  sequential: number;
  load: number;
  tokens: number;
  tokenDelayMs: number;
  countClears: (ids: string[]) => Promise<number>;
}): Promise<void> {
  const json = { "content-type": "application/json" };
  const messages = [{ role: "user", content: "Say something about benchmarks." }];
  const streamBody = JSON.stringify({ model: input.model, messages, max_tokens: input.tokens + 50, stream: true });
  const jsonBody = JSON.stringify({ model: input.model, messages, max_tokens: 32 });
  const svcAuth = { ...json, authorization: `Bearer ${input.svcKey}` };
  const upstreamAuth = { ...json, authorization: `Bearer ${input.upstreamKey}` };
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  console.log(
    `\nstreaming: ${input.sequential} streams one at a time per target (replies of ${input.tokens} tokens at ${input.tokenDelayMs} ms a token), then ${input.load} at once through svc\n`,
  );
  const targets = [
    { name: "reference upstream directly", url: `${input.upstreamUrl}/chat/completions`, headers: upstreamAuth },
    { name: "bare streaming forwarder", url: input.forwarderUrl, headers: json },
    { name: "svc POST /v2/chat/completions", url: `${input.svcUrl}/v2/chat/completions`, headers: svcAuth },
  ];
  const results = new Map<string, StreamTiming[]>();
  for (const t of targets) results.set(t.name, []);
  // Interleaved, so that a slow spell of a shared machine hits every target alike.
  for (let i = 0; i < input.sequential; i++) {
    for (const t of targets) results.get(t.name)!.push(await timeStream(t.url, t.headers, streamBody, agent));
  }
  for (const t of targets) {
    const runs = results.get(t.name)!;
    const gaps = runs.flatMap((r) => r.gapsMs);
    console.log(
      `${t.name.padEnd(32)} first content p50 ${ms(
        at(
          runs.map((r) => r.firstContentMs),
          0.5,
        ),
      )} ms  p99 ${ms(
        at(
          runs.map((r) => r.firstContentMs),
          0.99,
        ),
      )} ms · headers p50 ${ms(
        at(
          runs.map((r) => r.headersMs),
          0.5,
        ),
      )} ms · gaps between deltas p50 ${ms(at(gaps, 0.5))} ms  p99 ${ms(at(gaps, 0.99))} ms · ${runs.filter((r) => !r.ok).length} failed`,
    );
  }
  const fwd = results.get(targets[1].name)!;
  const svc = results.get(targets[2].name)!;
  const ttftAdded =
    at(
      svc.map((r) => r.firstContentMs),
      0.5,
    ) -
    at(
      fwd.map((r) => r.firstContentMs),
      0.5,
    );
  const gapAdded =
    at(
      svc.flatMap((r) => r.gapsMs),
      0.99,
    ) -
    at(
      fwd.flatMap((r) => r.gapsMs),
      0.99,
    );

  const v1 = { svc: [] as number[], fwd: [] as number[] };
  for (let i = 0; i < input.sequential; i++) {
    v1.fwd.push(await timeJson(input.forwarderUrl, json, jsonBody, agent));
    v1.svc.push(await timeJson(`${input.svcUrl}/v1/chat/completions`, svcAuth, jsonBody, agent));
  }
  const v1Added = at(v1.svc, 0.5) - at(v1.fwd, 0.5);
  console.log(`\nsvc's time to first content added (p50, c=1): ${ms(ttftAdded)} ms; svc v1's added latency (p50, c=1): ${ms(v1Added)} ms`);
  console.log(`svc's relay added per delta (gap p99, svc − forwarder): ${ms(gapAdded)} ms`);
  agent.destroy();

  // Many slow streams at once, /healthz asked meanwhile.
  const loadAgent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const idle = input.svcPid ? treeRssMiB(input.svcPid) : NaN;
  let peak = idle;
  const sampler = setInterval(() => {
    if (input.svcPid) peak = Math.max(peak, treeRssMiB(input.svcPid));
  }, 200);
  let running = true;
  const health: number[] = [];
  const statuses = new Map<number, number>();
  const healthAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const prober = (async () => {
    while (running) {
      const started = performance.now();
      const status = await new Promise<number>((resolve) => {
        const req = request(`${input.svcUrl}/healthz`, { agent: healthAgent }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", () => resolve(0));
        req.end();
      });
      health.push(performance.now() - started);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const started = performance.now();
  const streams = await Promise.all(
    Array.from({ length: input.load }, () => timeStream(`${input.svcUrl}/v2/chat/completions`, svcAuth, streamBody, loadAgent)),
  );
  const wallS = (performance.now() - started) / 1000;
  running = false;
  await prober;
  clearInterval(sampler);
  healthAgent.destroy();
  const ok = streams.filter((s) => s.ok && !Number.isNaN(s.firstContentMs));
  const ids = streams.map((s) => s.id).filter((id): id is string => id !== null);
  console.log(
    `\n${input.load} streams at once through svc: ${ok.length} answered in ${wallS.toFixed(1)} s; first content p50 ${ms(
      at(
        ok.map((s) => s.firstContentMs),
        0.5,
      ),
    )} ms p99 ${ms(
      at(
        ok.map((s) => s.firstContentMs),
        0.99,
      ),
    )} ms; duration p50 ${ms(
      at(
        ok.map((s) => s.totalMs),
        0.5,
      ),
    )} ms`,
  );
  console.log(`svc RSS (process tree): idle ${idle.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB`);
  console.log(
    `GET /healthz meanwhile, one at a time: ${health.length} asked, p50 ${ms(at(health, 0.5))} ms p99 ${ms(at(health, 0.99))} ms max ${ms(Math.max(...health))} ms; statuses ${[...statuses].map(([s, n]) => `${s}:${n}`).join(" ")}`,
  );
  await new Promise((r) => setTimeout(r, 1000));
  console.log(`clears: ${await input.countClears(ids)} for ${ids.length} streams started`);
}

/** Starts the bare streaming forwarder in its own process. */
export function startStreamingForwarder(
  start: (name: string, command: string, args: string[], env: NodeJS.ProcessEnv) => ChildProcess,
  port: number,
  upstreamUrl: string,
  upstreamKey: string,
  env: NodeJS.ProcessEnv,
): ChildProcess {
  return start("bare streaming forwarder", process.execPath, ["-e", STREAMING_FORWARDER, String(port), upstreamUrl, upstreamKey], env);
}
