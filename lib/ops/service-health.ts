import "server-only";
import { publicClient } from "@/lib/chain/client";
import { BASE_CHAIN_ID } from "@/lib/chain/constants";
import { db } from "@/lib/db";
import type { Health } from "@/lib/ops/schemas";

type Probe<T> = ({ ok: true } & T | { ok: false; error: string }) & { latency_ms: number };

async function probe<T extends object>(check: () => Promise<T>): Promise<Probe<T>> {
  const started = performance.now();
  try {
    const details = await Promise.race([
      check(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timed out after 3000 ms")), 3000).unref()),
    ]);
    return { ok: true, latency_ms: Math.round(performance.now() - started), ...details };
  } catch (error) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), error: (error as Error).message };
  }
}

/** Database and chain reachability, for /healthz and load balancers. */
export async function checkHealth(): Promise<Health> {
  const [database, chain] = await Promise.all([
    probe(async () => {
      await db.$queryRaw`SELECT 1`;
      return {};
    }),
    probe(async () => {
      const [chainId, blockNumber] = await Promise.all([publicClient.getChainId(), publicClient.getBlockNumber()]);
      if (chainId !== BASE_CHAIN_ID) throw new Error(`RPC serves chain ${chainId}, expected ${BASE_CHAIN_ID}`);
      return { chain_id: chainId, block_number: blockNumber.toString() };
    }),
  ]);
  return { status: database.ok && chain.ok ? ("ok" as const) : ("degraded" as const), database, chain };
}
