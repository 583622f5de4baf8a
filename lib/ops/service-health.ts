import "server-only";
import { BaseError } from "viem";
import { publicClient } from "@/lib/chain/client";
import { BASE_CHAIN_ID } from "@/lib/chain/constants";
import { db } from "@/lib/db/client";
import { log } from "@/lib/log";
import type { Health as PublicHealth } from "@/lib/ops/schemas";

/**
 * /healthz for load balancers and strangers alike: "ok" or "degraded" and nothing else. Which part failed, and
 * why, goes to the logs only, with every URL, address and host:port taken out (an RPC URL often carries a
 * provider key). The probes run at most once per MAX_AGE_MS whatever the request rate: concurrent callers share
 * the run in flight, later ones the cached answer, so a flood of /healthz costs no RPC or database calls.
 */

const MAX_AGE_MS = 5_000;
const PROBE_TIMEOUT_MS = 3_000;

type ProbeResult = { ok: true; latencyMs: number } | { ok: false; latencyMs: number; error: string };

let cached: { at: number; health: PublicHealth } | undefined;
let running: Promise<PublicHealth> | undefined;

/** The public health answer, probing the database and the chain at most once per MAX_AGE_MS. */
export async function getPublicHealth(options: { maxAgeMs?: number; now?: number } = {}): Promise<PublicHealth> {
  const now = options.now ?? Date.now();
  if (cached && now - cached.at < (options.maxAgeMs ?? MAX_AGE_MS)) return cached.health;
  running ??= probeAll()
    .then((health) => {
      cached = { at: Date.now(), health };
      return health;
    })
    .finally(() => {
      running = undefined;
    });
  return running;
}

async function probeAll(): Promise<PublicHealth> {
  const [database, chain] = await Promise.all([
    probe(async () => {
      await db.$queryRaw`SELECT 1`;
    }),
    probe(async () => {
      const [chainId] = await Promise.all([publicClient.getChainId(), publicClient.getBlockNumber({ cacheTime: 0 })]);
      if (chainId !== BASE_CHAIN_ID) throw new Error(`RPC serves chain ${chainId}, expected ${BASE_CHAIN_ID}`);
    }),
  ]);
  const ok = database.ok && chain.ok;
  if (!ok) log.warn("health degraded", { database, chain });
  return { status: ok ? "ok" : "degraded" };
}

async function probe(check: () => Promise<void>): Promise<ProbeResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
        timer.unref();
      }),
    ]);
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    return { ok: false, latencyMs: Math.round(performance.now() - started), error: redactEndpoints(describe(error)) };
  } finally {
    clearTimeout(timer);
  }
}

function describe(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage || error.name;
  const e = error as { name?: string; code?: string; message?: string };
  return [e.name, e.code, e.message?.split("\n")[0]].filter(Boolean).join(": ") || String(error);
}

/** Takes URLs, IP addresses and host:port pairs out of an error message before it is logged. */
export function redactEndpoints(text: string): string {
  return text
    .replace(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, "[url]")
    .replace(/\[[0-9a-f:.]+\](?::\d+)?/gi, "[address]")
    .replace(/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b/g, "[address]")
    .replace(/\b(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}\b/gi, "[address]")
    .replace(/\b[a-z0-9-]+(?:\.[a-z0-9-]+)*:\d{2,5}\b/gi, "[address]");
}
