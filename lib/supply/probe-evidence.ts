import "server-only";
import { db, Prisma } from "@/lib/db/client";
import type { ProbeView } from "@/lib/supply/schemas";

/** A check a probe can fail (lib/probes/judge.ts), and one failure as it is stored and published. */
export type ProbeCheck =
  "model" | "answer" | "stop" | "max_tokens" | "json_schema" | "tool_schema" | "truncated" | "usage" | "consensus" | "reference" | "error";
export type ProbeFailure = { check: ProbeCheck; expected: string | null; got: string | null };

/** Evidence entries published per offer (an offer serving several models can fail more). */
export const MAX_EVIDENCE = 20;

/**
 * The public evidence of each flagged offer: the failed checks of the round that flagged it (its latest round with a
 * failure: a round that passes makes it passing, and one it answered nothing in changes nothing). Every offer asked
 * for is in the map; passing and unprobed ones have an empty list.
 */
export async function probeEvidence(offerIds: string[]): Promise<Map<string, ProbeView["evidence"]>> {
  const evidence = new Map<string, ProbeView["evidence"]>(offerIds.map((id) => [id, []]));
  if (offerIds.length === 0) return evidence;
  const rows = await db.$queryRaw<{ offer_id: string; probe: string; failures: ProbeFailure[] | null; at: Date }[]>`
    WITH flagging AS (
      SELECT DISTINCT ON (r.offer_id) r.offer_id, r.round_id
      FROM probe_runs r JOIN offers o ON o.id = r.offer_id AND o.probe_status = 'flagged'
      WHERE r.offer_id IN (${Prisma.join(offerIds.map((id) => Prisma.sql`${id}::uuid`))}) AND r.outcome = 'failed'
      ORDER BY r.offer_id, r.created_at DESC
    )
    SELECT r.offer_id::text, r.probe, r.failures, COALESCE(r.settled_at, r.created_at) AS at
    FROM probe_runs r JOIN flagging f ON f.offer_id = r.offer_id AND f.round_id = r.round_id
    WHERE r.outcome = 'failed'
    ORDER BY r.offer_id, r.created_at, r.probe`;
  for (const row of rows) {
    const list = evidence.get(row.offer_id)!;
    for (const f of row.failures ?? []) {
      if (list.length >= MAX_EVIDENCE) break;
      list.push({ probe: row.probe, check: f.check, expected: f.expected, got: f.got, at: row.at.toISOString() });
    }
  }
  return evidence;
}

/** What an offer's row says of the probes (offers.probe_*). */
export type ProbeColumns = {
  id: string;
  probeStatus: ProbeView["status"];
  probeDelisted: boolean;
  probedAt: Date | null;
  probeFlaggedAt: Date | null;
  probeFlagReason: string | null;
};

/**
 * Each offer's probe verdict as the wire shows it (the public offers list, the supplier's own view): its columns, and
 * the evidence of the flagged ones (read for those only).
 */
export async function probeViews(offers: ProbeColumns[]): Promise<Map<string, ProbeView>> {
  const evidence = await probeEvidence(offers.filter((o) => o.probeStatus === "flagged").map((o) => o.id));
  return new Map(
    offers.map((o) => [
      o.id,
      {
        status: o.probeStatus,
        delisted: o.probeDelisted,
        probed_at: o.probedAt?.toISOString() ?? null,
        flagged_at: o.probeFlaggedAt?.toISOString() ?? null,
        reason: o.probeFlagReason,
        evidence: evidence.get(o.id) ?? [],
      },
    ]),
  );
}
