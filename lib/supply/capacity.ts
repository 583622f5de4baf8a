import "server-only";
import { db, type Tx } from "@/lib/db/client";

/**
 * Daily capacity. An offer sells N diem per UTC day; the day resets at 00:00 UTC and unused capacity
 * does not roll over. Per offer and day, offer_days holds what was burned (cleared) and what is held
 * by in-flight requests: remaining = daily capacity − burned − held (never below zero; a capacity cut
 * below today's use leaves zero). A missing offer_days row means nothing was used that day. The rule is SQL's
 * (prisma/functions/svc_offer_remaining_micro_diem.sql, which routing and the market views call); remainingMicroDiem
 * is its mirror for what is read through Prisma, held to it by tests/integration/money-rules.test.ts.
 */

const DAY_MS = 86_400_000;

/** The UTC day containing `now`, as midnight UTC (the value of a `@db.Date` column). */
export function utcDay(now: Date = new Date()): Date {
  return new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
}

/** "YYYY-MM-DD" of the UTC day containing `now`; use it (cast `::date`) in raw SQL, never a timestamp. */
export function utcDayKey(now: Date = new Date()): string {
  return utcDay(now).toISOString().slice(0, 10);
}

/** When today's capacity resets: the next 00:00 UTC. */
export function nextUtcMidnight(now: Date = new Date()): Date {
  return new Date(utcDay(now).getTime() + DAY_MS);
}

export type CapacityUse = { dailyCapacityMicroDiem: bigint; burnedMicroDiem: bigint; heldMicroDiem: bigint };

/** GREATEST(svc_offer_remaining_micro_diem(capacity, burned, held), 0): what a view shows as left today. */
export function remainingMicroDiem(use: CapacityUse): bigint {
  const remaining = use.dailyCapacityMicroDiem - use.burnedMicroDiem - use.heldMicroDiem;
  return remaining > 0n ? remaining : 0n;
}

export type OfferCapacity = CapacityUse & { day: string; remainingMicroDiem: bigint; resetsAt: Date };

/** One offer's capacity on the UTC day of `now`; null for an unknown offer. */
export async function getOfferCapacity(offerId: string, now: Date = new Date(), tx: Tx = db): Promise<OfferCapacity | null> {
  const offer = await tx.offer.findUnique({
    where: { id: offerId },
    select: { dailyCapacityMicroDiem: true, days: { where: { day: utcDay(now) } } },
  });
  if (!offer) return null;
  const use: CapacityUse = {
    dailyCapacityMicroDiem: offer.dailyCapacityMicroDiem,
    burnedMicroDiem: offer.days[0]?.burnedMicroDiem ?? 0n,
    heldMicroDiem: offer.days[0]?.heldMicroDiem ?? 0n,
  };
  return { ...use, day: utcDayKey(now), remainingMicroDiem: remainingMicroDiem(use), resetsAt: nextUtcMidnight(now) };
}
