import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { parseArgs } from "node:util";
import { freePort, waitFor } from "../process-utils";
import { DEFAULT_REFERENCE_API_KEY } from "./server";

/**
 * What the reference upstream costs when it streams, so a streaming bench knows it is not measuring the stand-in:
 * `npx tsx scripts/reference-upstream/bench-streams.ts [--streams 1000] [--tokens 200] [--token-delay 20]`.
 * The upstream runs in its own process (as a provider would); this one opens every stream at once over its own
 * connection, reads each to [DONE], and prints the time to headers and to the first content, each stream's duration
 * against its paced minimum, the deltas per second, and the upstream's peak RSS (sampled from /proc).
 */

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "1000" },
    tokens: { type: "string", default: "200" },
    "token-delay": { type: "string", default: "20" },
  },
});
const streams = Number(values.streams);
const tokens = Number(values.tokens);
const tokenDelayMs = Number(values["token-delay"]);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return line ? Number(line.split(/\s+/)[1]) / 1024 : NaN;
}

type Timing = { headersMs: number; firstContentMs: number; totalMs: number; deltas: number };

function streamOnce(port: number, agent: Agent): Promise<Timing> {
  const body = JSON.stringify({ model: "llama-3.3-70b", messages: [{ role: "user", content: "Hello" }], stream: true });
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/v1/chat/completions",
        method: "POST",
        agent,
        headers: {
          Authorization: `Bearer ${DEFAULT_REFERENCE_API_KEY}`,
          "Content-Type": "application/json",
          "X-Upstream-Mode": `long:${tokens}`,
          "Content-Length": Buffer.byteLength(body),
        },
      },
      (res) => {
        const timing: Timing = { headersMs: performance.now() - started, firstContentMs: NaN, totalMs: NaN, deltas: 0 };
        let tail = "";
        res.setEncoding("utf8");
        res.on("data", (text: string) => {
          const events = (tail + text).split("\n\n");
          tail = events.pop()!;
          for (const event of events) {
            if (!event.includes('"content":"') || event.includes('"content":""')) continue;
            if (timing.deltas++ === 0) timing.firstContentMs = performance.now() - started;
          }
        });
        res.on("end", () => resolve({ ...timing, totalMs: performance.now() - started }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "scripts/reference-upstream/main.ts", "--port", String(port), "--token-delay", String(tokenDelayMs)],
    { stdio: "ignore" },
  );
  try {
    await waitFor("the reference upstream", 30_000, () =>
      fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      ),
    );
    const idleRss = rssMiB(child.pid!);
    let peakRss = idleRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMiB(child.pid!))), 50);
    const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
    const started = performance.now();
    const timings = await Promise.all(Array.from({ length: streams }, () => streamOnce(port, agent)));
    const wallMs = performance.now() - started;
    clearInterval(sampler);

    const sorted = (pick: (t: Timing) => number) => timings.map(pick).sort((a, b) => a - b);
    const line = (name: string, values: number[]) =>
      console.log(
        `${name.padEnd(22)} p50 ${percentile(values, 50).toFixed(1).padStart(8)} ms  p99 ${percentile(values, 99).toFixed(1).padStart(8)} ms  max ${values.at(-1)!.toFixed(1).padStart(8)} ms`,
      );
    const deltas = timings.reduce((n, t) => n + t.deltas, 0);
    console.log(
      `${streams} concurrent streams of ${tokens} tokens at ${tokenDelayMs} ms per token (each >= ${tokens * tokenDelayMs} ms paced)`,
    );
    line(
      "headers",
      sorted((t) => t.headersMs),
    );
    line(
      "first content",
      sorted((t) => t.firstContentMs),
    );
    line(
      "stream duration",
      sorted((t) => t.totalMs),
    );
    console.log(`content deltas         ${deltas} in ${(wallMs / 1000).toFixed(2)} s: ${Math.round(deltas / (wallMs / 1000))} per second`);
    console.log(`upstream RSS           idle ${idleRss.toFixed(0)} MiB, peak ${peakRss.toFixed(0)} MiB`);
  } finally {
    child.kill();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
