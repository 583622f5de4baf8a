/** What the health endpoint answers. */
import { z } from "zod";
import { component } from "@/lib/wire";

export const HealthSchema = component(
  "Health",
  z
    .object({ status: z.enum(["ok", "degraded"]) })
    .describe("Nothing but the verdict: which part failed, and why, is logged, never answered."),
);
export type Health = z.output<typeof HealthSchema>;
