/** What the health endpoint answers. */
import { z } from "zod";
import { component } from "@/lib/wire";

const Probe = z.union([
  z.object({ ok: z.literal(true), latency_ms: z.number() }),
  z.object({ ok: z.literal(false), latency_ms: z.number(), error: z.string() }),
]);

export const HealthSchema = component(
  "Health",
  z.object({
    status: z.enum(["ok", "degraded"]),
    database: Probe,
    chain: z.union([
      z.object({ ok: z.literal(true), latency_ms: z.number(), chain_id: z.number().int(), block_number: z.string() }),
      z.object({ ok: z.literal(false), latency_ms: z.number(), error: z.string() }),
    ]),
  }),
);
export type Health = z.output<typeof HealthSchema>;
