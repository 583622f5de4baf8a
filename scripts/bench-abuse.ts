/**
 * `npm run bench:abuse`: the worst chat requests we can construct at the body limit, sent over HTTP to the
 * app's own route handlers (a node:http server on loopback), each answer's latency printed beside the latency
 * of GET /healthz polled meanwhile. Figures are printed, never asserted (timings flake on a shared machine).
 *
 * The cases: an unfunded key with a megabyte of the tokenizer's costliest text (random CJK); funded keys with
 * a megabyte of random CJK, random symbols, U+FFFD, and a megabyte of tool schema; invalid UTF-8; numbers that
 * would re-encode larger; a megabyte of nested arrays, of numbers, and a tool schema of 70,000 properties (the body's
 * depth and value limits, lib/json-limits.ts); a supplier reply of 4 MB without usage; a reply claiming 1M/1M tokens;
 * then all of them at once.
 *
 * Then what a stranger can make the front door hold, against the app in its own process behind the production
 * front door (tests/helpers/app-process.ts: createFrontDoorServer with the configured timeouts and caps, the direct
 * completion route), each row printing the server process's RSS before, at its peak and after, and GET /healthz's
 * worst latency meanwhile (polled from another loopback address, 127.0.0.2, so the per-address cap is the
 * abuser's only): pipelined requests never read, idle-socket floods (one address, and 30), a 10 GB Content-Length
 * without a key, an endless chunked body with a funded key, and ten 5 MB bodies over the limit (how many clients read
 * their 413 or 401 before a reset stopped them). Linux only (/proc for RSS, 127.0.0.x addresses).
 *
 * Uses DATABASE_URL if set (its name must contain "bench" or "test": the schema is wiped), else an embedded
 * database. Options: --rounds N (default 3) per case; --only bodies|front-door runs one half.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, createServer, request, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { parseArgs } from "node:util";
import { startEmbeddedDatabase } from "./embedded-db";
import { migrateDatabase } from "../server/migrate";
import { resetTestDatabase } from "./migrate";
import { freePort, waitFor } from "./process-utils";
import { DEFAULT_REFERENCE_API_KEY } from "./reference-upstream/server";

const { values: opts } = parseArgs({ options: { rounds: { type: "string", default: "3" }, only: { type: "string" } } });
const BODY_LIMIT = 1_000_000;

function costly(chars: number, from: number, span: number): string {
  let seed = 11;
  return Array.from({ length: chars }, () =>
    String.fromCharCode(from + ((seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff) % span)),
  ).join("");
}

/** A chat body of about `BODY_LIMIT` bytes whose one message is `fill(n)` characters of `bytesPerChar` bytes each. */
function atLimit(model: string, bytesPerChar: number, fill: (chars: number) => string, extra = ""): string {
  const shell = (content: string) => `{"model":"${model}","messages":[{"role":"user","content":"${content}"}]${extra}}`;
  return shell(fill(Math.floor((BODY_LIMIT - Buffer.byteLength(shell("")) - 64) / bytesPerChar)));
}

function schemaTool(bytes: number): string {
  const properties: string[] = [];
  for (let size = 0; size < bytes;) {
    const property = `"p${properties.length}":{"type":"string","description":"${costly(12, 0x4e00 + properties.length, 20_000)}"}`;
    properties.push(property);
    size += Buffer.byteLength(property) + 1;
  }
  return `,"tools":[{"type":"function","function":{"name":"huge","parameters":{"type":"object","properties":{${properties.join(",")}}}}}]`;
}

async function main() {
  const stops: (() => Promise<void>)[] = [];
  // eslint-disable-next-line no-restricted-properties -- the launcher configures the modules it imports next
  const env = process.env;
  let url = env.DATABASE_URL;
  if (url) await resetTestDatabase(url);
  else {
    const embedded = await startEmbeddedDatabase();
    stops.push(embedded.stop);
    url = embedded.url;
  }
  await migrateDatabase(url);
  // The reference upstream runs in its own process, as a supplier's provider would: its work is not ours.
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/reference-upstream/main.ts", "--port", String(port)], {
    stdio: "ignore",
  });
  stops.push(async () => void child.kill());
  const reference = { url: `http://127.0.0.1:${port}/v1`, apiKey: DEFAULT_REFERENCE_API_KEY };
  await waitFor("reference upstream", 30_000, () =>
    fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    ),
  );
  const canned = await startCannedReplies();
  stops.push(() => new Promise<void>((resolve) => canned.server.close(() => resolve())));
  Object.assign(env, {
    DATABASE_URL: url,
    ALLOW_PRIVATE_UPSTREAMS: "true",
    LOG_LEVEL: "error",
    MAX_BODY_BYTES: String(BODY_LIMIT),
    RATE_LIMIT_PER_KEY_PER_MINUTE: "1000000",
    RATE_LIMIT_PER_IP_PER_MINUTE: "1000000",
  });

  const [{ db }, { seedCatalog }, { createApiKey }, { encryptCredential }, { startRouteServer }, { seedBuyerBalance }] = await Promise.all([
    import("../lib/db/client"),
    import("../prisma/seed"),
    import("../lib/auth/api-keys"),
    import("../lib/upstream/key-encryption"),
    import("../tests/helpers/route-server"),
    import("../tests/helpers/ledger-factories"),
  ]);
  await seedCatalog(db);

  const supplier = await db.account.create({ data: { walletAddress: "0x000000000000000000000000000000000000bEEF" } });
  const offer = (upstreamBaseUrl: string, apiKey: string, modelId: string, upstreamModel: string, priceCents: number) =>
    db.offer.create({
      data: {
        supplierId: supplier.id,
        upstreamBaseUrl,
        upstreamKeyCiphertext: encryptCredential(apiKey),
        priceCents,
        dailyCapacityMicroDiem: 1_000_000_000_000n,
        models: { create: [{ modelId, upstreamModel, supportsTools: true, supportsJsonSchema: true }] },
      },
    });
  await offer(reference.url, reference.apiKey, "llama-3.3-70b", "llama-3.3-70b", 90);
  await offer(canned.url, "k", "qwen3-235b", "huge-reply", 90);
  await offer(canned.url, "k", "mistral-31-24b", "inflated", 90);

  const keyFor = async (wallet: string, balanceMicros: bigint) => {
    const account = await db.account.create({ data: { walletAddress: wallet } });
    if (balanceMicros > 0n) await seedBuyerBalance(account.id, balanceMicros);
    return (await createApiKey(account.id, {})).key;
  };
  const funded = await keyFor("0x000000000000000000000000000000000000cAFE", 1_000_000_000n);
  const unfunded = await keyFor("0x000000000000000000000000000000000000dEaD", 0n);

  if (opts.only !== "bodies") {
    await frontDoorRows({ funded, stops });
    if (opts.only === "front-door") {
      await db.$disconnect();
      for (const stop of stops) await stop();
      return;
    }
  }

  const app = await startRouteServer();
  stops.unshift(app.stop);

  const llama = "llama-3.3-70b";
  const cases: { label: string; key: string; body: () => string | Uint8Array<ArrayBuffer> }[] = [
    { label: "unfunded key, 1 MB random CJK", key: unfunded, body: () => atLimit(llama, 3, (n) => costly(n, 0x4e00, 20_000)) },
    { label: "1 MB random CJK (beyond the context)", key: funded, body: () => atLimit(llama, 3, (n) => costly(n, 0x4e00, 20_000)) },
    { label: "1 MB random symbols (beyond the context)", key: funded, body: () => atLimit(llama, 3, (n) => costly(n, 0x2200, 0x900)) },
    { label: "1 MB of U+FFFD (fits: served)", key: funded, body: () => atLimit(llama, 3, (n) => "\uFFFD".repeat(n), `,"max_tokens":16`) },
    {
      label: "1 MB tool schema, random CJK descriptions",
      key: funded,
      body: () => `{"model":"${llama}","messages":[{"role":"user","content":"hi"}],"max_tokens":16${schemaTool(BODY_LIMIT - 1_000)}}`,
    },
    {
      label: "1 MB invalid UTF-8",
      key: funded,
      body: () =>
        new Uint8Array(
          Buffer.concat([
            Buffer.from(`{"model":"${llama}","messages":[{"role":"user","content":"`),
            Buffer.alloc(BODY_LIMIT - 200, 0xff),
            Buffer.from(`"}]}`),
          ]),
        ),
    },
    {
      label: "numbers that re-encode 5x larger",
      key: funded,
      body: () =>
        `{"model":"${llama}","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"enum":[${Array(190_000).fill("1e20").join(",")}]}}}]}`,
    },
    {
      label: "1 MB of nested arrays (over MAX_JSON_DEPTH)",
      key: funded,
      body: () => `{"model":"${llama}","messages":${"[".repeat(490_000)}${"]".repeat(490_000)}}`,
    },
    {
      label: "490,000 numbers (over MAX_JSON_VALUES)",
      key: funded,
      body: () => `{"model":"${llama}","messages":[${Array(490_000).fill("0").join(",")}]}`,
    },
    {
      label: "tool schema of 70,000 properties (within limits)",
      key: funded,
      body: () =>
        `{"model":"${llama}","messages":[{"role":"user","content":"hi"}],"max_tokens":16,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{${Array.from({ length: 70_000 }, (_, i) => `"p${i}":{}`).join(",")}}}}}]}`,
    },
    {
      label: "supplier reply of 4 MB without usage",
      key: funded,
      body: () => `{"model":"qwen3-235b","messages":[{"role":"user","content":"hi"}],"max_tokens":256}`,
    },
    {
      label: "supplier claims 1M/1M tokens for one word",
      key: funded,
      body: () => `{"model":"mistral-31-24b","messages":[{"role":"user","content":"hi"}],"max_tokens":256}`,
    },
  ];

  const post = async (key: string, body: string | Uint8Array<ArrayBuffer>) => {
    const started = performance.now();
    const res = await fetch(`${app.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body,
    });
    const text = await res.text();
    const code = res.ok ? "" : ` ${(JSON.parse(text) as { error: { code: string } }).error.code}`;
    return { status: `${res.status}${code}`, ms: performance.now() - started };
  };

  /** Polls /healthz back to back until `done` settles; returns each poll's latency. */
  const pollHealth = async (done: Promise<unknown>) => {
    const latencies: number[] = [];
    let finished = false;
    void done.finally(() => (finished = true));
    while (!finished) {
      const started = performance.now();
      await (await fetch(`${app.url}/healthz`)).arrayBuffer();
      latencies.push(performance.now() - started);
    }
    return latencies;
  };

  const fmt = (n: number) => `${n.toFixed(0).padStart(6)} ms`;
  const summary = (ms: number[]) => {
    const sorted = [...ms].sort((a, b) => a - b);
    return sorted.length === 0
      ? "       (none)"
      : `p50 ${fmt(sorted[Math.floor(sorted.length / 2)])}  max ${fmt(sorted.at(-1)!)}  n=${sorted.length}`;
  };

  const idle: number[] = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    await (await fetch(`${app.url}/healthz`)).arrayBuffer();
    idle.push(performance.now() - started);
  }
  console.log(`\nsvc abuse bench: bodies of about ${BODY_LIMIT} bytes over HTTP, node ${process.version}, ${opts.rounds} rounds each\n`);
  console.log(`${"GET /healthz, idle".padEnd(46)} ${"".padEnd(32)} healthz ${summary(idle)}`);

  const rounds = Number(opts.rounds);
  for (const c of cases) {
    const body = c.body();
    for (let round = 0; round < rounds; round++) {
      const request = post(c.key, body);
      const [answer, health] = await Promise.all([request, pollHealth(request)]);
      console.log(`${c.label.padEnd(46)} ${answer.status.padEnd(24)} ${fmt(answer.ms)}  healthz ${summary(health)}`);
    }
  }
  const all = Promise.all(cases.map((c) => post(c.key, c.body())));
  const [answers, health] = await Promise.all([all, pollHealth(all)]);
  console.log(
    `${`all ${cases.length} cases at once`.padEnd(46)} ${"slowest".padEnd(24)} ${fmt(Math.max(...answers.map((a) => a.ms)))}  healthz ${summary(health)}`,
  );

  await db.$disconnect();
  for (const stop of stops) await stop();
}

/** The server process's resident memory in MB (Linux). */
function rssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** Opens a raw connection from `localAddress`; resolves once connected (or closed first). */
function openSocket(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress });
    socket.on("error", () => undefined);
    socket.resume(); // reads whatever comes, so the server's close is seen
    socket.once("connect", () => resolve(socket));
    socket.once("close", () => resolve(socket));
  });
}

/**
 * The front door's rows: the app in a process of its own (as production runs it), abused from 127.0.0.1 (and
 * 127.0.0.10–39 for the flood from many addresses), /healthz polled from 127.0.0.2 throughout each row.
 */
async function frontDoorRows({ funded, stops }: { funded: string; stops: (() => Promise<void>)[] }) {
  const { startAppProcess } = await import("../tests/helpers/app-process");
  const server = await startAppProcess({ LOG_LEVEL: "error" });
  stops.unshift(() => server.kill());
  const port = Number(new URL(server.url).port);
  const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: "127.0.0.2" });
  const healthz = () =>
    new Promise<number>((resolve) => {
      const started = performance.now();
      const req = request({ host: "127.0.0.1", port, path: "/healthz", agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(performance.now() - started));
      });
      req.on("error", () => resolve(Number.POSITIVE_INFINITY));
      req.end();
    });
  for (let i = 0; i < 20; i++) await healthz();

  /** Until the server answers /healthz promptly again (the row before may have left it work), at most 30 s. */
  const quiet = async () => {
    const until = performance.now() + 30_000;
    for (let fast = 0; fast < 5 && performance.now() < until;) fast = (await healthz()) < 20 ? fast + 1 : 0;
  };

  /** Runs `abuse` while /healthz is polled and the server's RSS sampled; prints one row. */
  const row = async (label: string, abuse: () => Promise<string>) => {
    await quiet();
    const before = rssMb(server.pid);
    let peak = before;
    let worst = 0;
    let polls = 0;
    let done = false;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 50);
    const poller = (async () => {
      while (!done) {
        worst = Math.max(worst, await healthz());
        polls++;
      }
    })();
    const started = performance.now();
    const outcome = await abuse();
    const seconds = (performance.now() - started) / 1000;
    done = true;
    await poller;
    clearInterval(sampler);
    const after = rssMb(server.pid);
    const mb = (n: number) => `${n.toFixed(0).padStart(5)} MB`;
    console.log(
      `${label.padEnd(58)} ${seconds.toFixed(1).padStart(5)} s  RSS ${mb(before)} → peak ${mb(peak)} (+${(peak - before).toFixed(0)}) → after ${mb(after)}  healthz max ${worst.toFixed(0).padStart(5)} ms n=${polls}  ${outcome}`,
    );
  };
  const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  console.log(`\nthe front door in its own process (pid ${server.pid}), abused over loopback; /healthz polled from 127.0.0.2\n`);

  /**
   * Opens `count` connections from `from`, 100 at a time: thousands of simultaneous connects overflow the kernel's
   * accept queue (the listen backlog), and the ones dropped there would measure the kernel's retries, not the server.
   */
  const openMany = async (count: number, from: string) => {
    const sockets: Socket[] = [];
    for (let opened = 0; opened < count; opened += 100) {
      sockets.push(...(await Promise.all(Array.from({ length: Math.min(100, count - opened) }, () => openSocket(port, from)))));
      await settle(20);
    }
    return sockets;
  };

  const pipelined = (connections: number, each: number) => async () => {
    const sockets = await openMany(connections, "127.0.0.1");
    let received = 0;
    for (const socket of sockets) {
      socket.pause(); // never reads
      socket.on("data", (chunk: Buffer) => (received += chunk.byteLength));
      socket.write("GET /openapi.json HTTP/1.1\r\nHost: localhost\r\n\r\n".repeat(each));
    }
    await settle(3_000);
    // Read now, to see which connections the server closed meanwhile.
    for (const socket of sockets) socket.resume();
    await settle(1_000);
    const open = sockets.filter((s) => !s.destroyed && !s.readableEnded).length;
    for (const socket of sockets) socket.destroy();
    await settle(1_000);
    return `${open}/${connections} connections left open by the server, ${(received / 1e6).toFixed(1)} MB of answers read after 3 s`;
  };
  await row("1 connection pipelining 1,500 GET /openapi.json, unread", pipelined(1, 1_500));
  await row("200 connections × 16 pipelined GET /openapi.json, unread", pipelined(200, 16));
  await row("200 connections × 50 pipelined GET /openapi.json, unread", pipelined(200, 50));

  const flood = (addresses: number, perAddress: number) => async () => {
    const started = performance.now();
    const sockets: Socket[] = [];
    for (let a = 0; a < addresses; a++) sockets.push(...(await openMany(perAddress, addresses === 1 ? "127.0.0.1" : `127.0.0.${10 + a}`)));
    const openAt = () => sockets.filter((s) => !s.destroyed && !s.readableEnded).length;
    await settle(1_000);
    const refused = sockets.length - openAt();
    // Until all are closed by the server, at most 20 s (the headers timeout is 10 s by default).
    while (openAt() > 0 && performance.now() - started < 20_000) await settle(100);
    const left = openAt();
    for (const socket of sockets) socket.destroy();
    return `${sockets.length} sockets: ${refused} closed within 1 s, ${left} still open after ${((performance.now() - started) / 1000).toFixed(1)} s`;
  };
  await row("3,000 idle sockets from one address", flood(1, 3_000));
  await row("3,000 idle sockets from 30 addresses (100 each)", flood(30, 100));

  const hugeBody = (headers: string, chunked: boolean) => async () => {
    const socket = await openSocket(port, "127.0.0.1");
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString("latin1")));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${headers}\r\n`);
    const block = Buffer.alloc(64 * 1024, 0x20);
    const chunk = chunked ? Buffer.concat([Buffer.from(`${block.byteLength.toString(16)}\r\n`), block, Buffer.from("\r\n")]) : block;
    const started = performance.now();
    let sent = 0;
    let answeredMs = Number.NaN;
    // Writes as fast as the server takes it, for at most 10 s, until it answers.
    while (!answer.includes("\r\n\r\n") && !socket.destroyed && performance.now() - started < 10_000) {
      sent += block.byteLength;
      if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once("drain", resolve)), closed, settle(100)]);
    }
    if (answer.includes("\r\n\r\n")) answeredMs = performance.now() - started;
    await Promise.race([closed, settle(2_000)]);
    const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? "none";
    const code = /"code":"([a-z_]+)"/.exec(answer)?.[1] ?? "";
    const wasClosed = socket.destroyed || socket.readableEnded;
    socket.destroy();
    return `${status} ${code} after ${answeredMs.toFixed(0)} ms, ${(sent / 1e6).toFixed(1)} MB written by the client, ${wasClosed ? "closed" : "left open"}`;
  };
  await row("Content-Length: 10 GB without a key", hugeBody("Content-Length: 10000000000\r\n", false));
  await row("endless chunked body, funded key", hugeBody(`Transfer-Encoding: chunked\r\nAuthorization: Bearer ${funded}\r\n`, true));

  /**
   * Ten uploads of 5 MB, one after another, with node:http as a client library sends them: how many read their answer,
   * and how many were stopped by the connection's reset first (the server answers before it reads the body).
   */
  const overLimit = (headers: Record<string, string>, chunked: boolean) => async () => {
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 10; i++) {
      const outcome = await upload(port, headers, 5 * 1024 * 1024, chunked);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    return [...outcomes].map(([outcome, count]) => `${count}/10 ${outcome}`).join(", ");
  };
  await row("5 MB body over the limit ×10, funded key, Content-Length", overLimit({ authorization: `Bearer ${funded}` }, false));
  await row("5 MB body over the limit ×10, funded key, chunked", overLimit({ authorization: `Bearer ${funded}` }, true));
  await row("5 MB body ×10 without a key, Content-Length", overLimit({}, false));
  agent.destroy();
}

/** POSTs `bytes` of body to the completion route as fast as the server takes it: the answer's status, or the error before it. */
function upload(port: number, headers: Record<string, string>, bytes: number, chunked: boolean): Promise<string> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: string) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/v1/chat/completions",
        agent: false,
        headers: { "content-type": "application/json", ...(chunked ? {} : { "content-length": String(bytes) }), ...headers },
      },
      (res) => {
        res.resume();
        res.on("error", (error: NodeJS.ErrnoException) => settle(error.code ?? error.message));
        res.on("end", () => settle(`read ${res.statusCode}`));
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => settle(error.code ?? error.message));
    const block = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < bytes && !settled && !req.destroyed) {
        const size = Math.min(block.byteLength, bytes - sent);
        sent += size;
        if (!req.write(block.subarray(0, size))) return void req.once("drain", pump);
      }
      if (!settled && !req.destroyed) req.end();
    };
    pump();
  });
}

/** A supplier upstream that answers 4 MB without usage ("huge-reply") or one word claiming 1M/1M tokens ("inflated"). */
async function startCannedReplies(): Promise<{ url: string; server: Server }> {
  const huge = JSON.stringify({
    id: "x",
    object: "chat.completion",
    created: 1,
    model: "huge-reply",
    choices: [{ index: 0, message: { role: "assistant", content: costly(1_380_000, 0x2200, 0x900) }, finish_reason: "stop" }],
  });
  const inflated = JSON.stringify({
    id: "y",
    object: "chat.completion",
    created: 1,
    model: "inflated",
    choices: [{ index: 0, message: { role: "assistant", content: "Yes." }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 },
  });
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = req.method === "POST" ? (JSON.parse(Buffer.concat(chunks).toString()) as { model: string }) : null;
    const text = body?.model === "huge-reply" ? huge : inflated;
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
