import "server-only";
import { isDatabaseUnavailable } from "@/lib/db/errors";
import { log } from "@/lib/log";
import { processState } from "@/lib/process-state";
import { releaseHold } from "@/lib/router/holds";

/**
 * Releases a hold the completion path gives up on (the upstream failed, the clear failed) and, when the database is
 * unreachable at that moment, keeps trying in the background until it answers: a completion that failed during an
 * outage must not keep the buyer's money held until the hold's deadline and the sweeper. Idempotent: a hold that was
 * cleared after all (a clear whose commit landed before the connection broke) is simply no longer active.
 *
 * What this process holds is bounded: at most MAX_PENDING holds wait for a retry (beyond that the sweeper, which
 * releases every hold past its deadline, is the only way back), and each is tried for at most MAX_ATTEMPTS.
 */
const MAX_PENDING = 10_000;
const MAX_ATTEMPTS = 20;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 10_000;

const pending = processState("pending-hold-releases", () => new Set<string>());

/** Releases the hold now, or schedules retries while the database is unavailable; other errors are thrown. */
export async function releaseHoldOrRetry(holdId: string): Promise<void> {
  try {
    await releaseHold(holdId);
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    retryLater(holdId, 1);
  }
}

/** Holds waiting for the database to come back (tests, metrics). */
export function pendingHoldReleases(): number {
  return pending.size;
}

function retryLater(holdId: string, attempt: number) {
  if (attempt === 1) {
    if (pending.has(holdId)) return;
    if (pending.size >= MAX_PENDING) {
      log.warn("hold release left to the sweeper: too many waiting for the database", { hold_id: holdId });
      return;
    }
    pending.add(holdId);
  }
  const wait = Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), MAX_RETRY_MS);
  setTimeout(() => {
    releaseHold(holdId).then(
      () => pending.delete(holdId),
      (error: unknown) => {
        if (attempt < MAX_ATTEMPTS && isDatabaseUnavailable(error)) return retryLater(holdId, attempt + 1);
        pending.delete(holdId);
        log.warn("hold release left to the sweeper", { hold_id: holdId, attempts: attempt, error });
      },
    );
  }, wait).unref();
}
