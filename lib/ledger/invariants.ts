import "server-only";
import { db, Prisma, type Tx } from "@/lib/db/client";

export type LedgerReport = { ok: boolean; violations: string[] };

/** How long one full check may take before it is abandoned (and reported as failed to run). */
export const INVARIANTS_TIMEOUT_MS = 10 * 60_000;

/**
 * Checks the ledger's invariants on one consistent snapshot:
 * every journal entry sums to zero; every materialized balance equals the sum of its lines;
 * no balance but the external contra account is negative; held money is within [0, balance] and
 * equals the active holds; an offer-day's held capacity equals its active holds' burn; an offer's days count its
 * clears and their supplier shares; every clear moved exactly
 * its charge, supplier share and fee; every probe moved exactly its supplier share (and a platform account holds exactly
 * its reserved probes); a settled payment is
 * credited by exactly its amount and no other payment at all; a pending or sent withdrawal has debited exactly
 * its amount and a failed one nothing.
 * Pass a transaction client to check uncommitted state (tests do); otherwise it opens a REPEATABLE READ one.
 */
export async function checkLedgerInvariants(tx?: Tx): Promise<LedgerReport> {
  if (!tx) {
    // It reads the whole history: seconds once there are millions of clears (a soak measured 6 s at 200,000 on a
    // loaded 2-core box), far beyond Prisma's 5 s default for an interactive transaction.
    return db.$transaction((t) => checkLedgerInvariants(t), {
      isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead,
      timeout: INVARIANTS_TIMEOUT_MS,
      maxWait: 10_000,
    });
  }
  const violations: string[] = [];

  const unbalanced = await tx.$queryRaw<{ entry_id: string; total: string }[]>`
    SELECT entry_id::text, SUM(amount_micros)::text AS total
    FROM journal_lines GROUP BY entry_id HAVING SUM(amount_micros) <> 0`;
  for (const e of unbalanced) violations.push(`journal entry ${e.entry_id} lines sum to ${e.total}, not 0`);

  const drifted = await tx.$queryRaw<{ id: string; balance: string; lines: string }[]>`
    SELECT la.id::text, la.balance_micros::text AS balance, COALESCE(SUM(jl.amount_micros), 0)::text AS lines
    FROM ledger_accounts la LEFT JOIN journal_lines jl ON jl.ledger_account_id = la.id
    GROUP BY la.id HAVING la.balance_micros <> COALESCE(SUM(jl.amount_micros), 0)`;
  for (const a of drifted) violations.push(`ledger account ${a.id} balance ${a.balance} differs from its lines ${a.lines}`);

  const negative = await tx.$queryRaw<{ id: string; kind: string; balance: string; held: string }[]>`
    SELECT id::text, kind::text, balance_micros::text AS balance, held_micros::text AS held
    FROM ledger_accounts
    WHERE (kind <> 'external' AND balance_micros < 0) OR held_micros < 0
       OR (kind <> 'external' AND held_micros > balance_micros)`;
  for (const a of negative) violations.push(`ledger account ${a.id} (${a.kind}) has balance ${a.balance} and held ${a.held}`);

  const heldDrift = await tx.$queryRaw<{ id: string; held: string; holds: string }[]>`
    SELECT la.id::text, la.held_micros::text AS held, COALESCE(h.total, 0)::text AS holds
    FROM ledger_accounts la
    LEFT JOIN (SELECT account_id, SUM(amount_micros) AS total FROM holds WHERE status = 'active' GROUP BY account_id) h
      ON h.account_id = la.owner_id
    WHERE la.kind = 'buyer' AND la.held_micros <> COALESCE(h.total, 0)`;
  for (const a of heldDrift) violations.push(`buyer ledger account ${a.id} holds ${a.held} but its active holds total ${a.holds}`);

  const capacityDrift = await tx.$queryRaw<{ offer_id: string; day: string; held: string; holds: string }[]>`
    SELECT d.offer_id::text, d.day::text, d.held_micro_diem::text AS held, COALESCE(h.total, 0)::text AS holds
    FROM offer_days d
    LEFT JOIN (SELECT offer_id, day, SUM(burn_micro_diem) AS total FROM holds WHERE status = 'active' GROUP BY offer_id, day) h
      ON h.offer_id = d.offer_id AND h.day = d.day
    WHERE d.held_micro_diem <> COALESCE(h.total, 0)`;
  for (const d of capacityDrift)
    violations.push(`offer ${d.offer_id} on ${d.day} holds ${d.held} micro-diem but its active holds burn ${d.holds}`);

  // An offer's running sums on its days (what its supplier's offers list shows) are its clears' count and shares.
  const earningsDrift = await tx.$queryRaw<
    { offer_id: string; clears: string; earned: string; actual_clears: string; actual_earned: string }[]
  >`
    SELECT o.id::text AS offer_id, COALESCE(d.clears, 0)::text AS clears, COALESCE(d.earned, 0)::text AS earned,
           COALESCE(c.clears, 0)::text AS actual_clears, COALESCE(c.earned, 0)::text AS actual_earned
    FROM offers o
    LEFT JOIN (SELECT offer_id, SUM(clears) AS clears, SUM(earned_micros) AS earned FROM offer_days GROUP BY offer_id) d
      ON d.offer_id = o.id
    LEFT JOIN (SELECT offer_id, COUNT(*) AS clears, SUM(supplier_micros) AS earned FROM clears GROUP BY offer_id) c
      ON c.offer_id = o.id
    WHERE COALESCE(d.clears, 0) <> COALESCE(c.clears, 0) OR COALESCE(d.earned, 0) <> COALESCE(c.earned, 0)`;
  for (const d of earningsDrift) {
    violations.push(
      `offer ${d.offer_id} counts ${d.clears} clears earning ${d.earned} on its days, but made ${d.actual_clears} earning ${d.actual_earned}`,
    );
  }

  // Money in: a settled payment is credited by exactly its amount; no other payment is credited at all.
  const miscredited = await tx.$queryRaw<{ id: string; status: string; amount: string; credited: string }[]>`
    SELECT p.id::text, p.status::text, p.amount_micros::text AS amount,
           COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind <> 'external'), 0)::text AS credited
    FROM payments p
    LEFT JOIN journal_entries je ON je.payment_id = p.id
    LEFT JOIN journal_lines jl ON jl.entry_id = je.id
    LEFT JOIN ledger_accounts la ON la.id = jl.ledger_account_id
    GROUP BY p.id
    HAVING COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind <> 'external'), 0)
           <> CASE WHEN p.status = 'settled' THEN p.amount_micros ELSE 0 END`;
  for (const p of miscredited) violations.push(`payment ${p.id} (${p.status}, ${p.amount}) is credited ${p.credited}`);

  // Trades: every clear is one journal entry moving exactly its charge from the buyer, its share to the supplier
  // and its fee to the platform.
  const misclears = await tx.$queryRaw<{ id: string; charge: string; buyer: string; supplier: string; fee: string }[]>`
    SELECT c.id::text, c.charge_micros::text AS charge,
           COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'buyer'), 0)::text AS buyer,
           COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'supplier'), 0)::text AS supplier,
           COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'platform'), 0)::text AS fee
    FROM clears c
    LEFT JOIN journal_entries je ON je.clear_id = c.id
    LEFT JOIN journal_lines jl ON jl.entry_id = je.id
    LEFT JOIN ledger_accounts la ON la.id = jl.ledger_account_id
    GROUP BY c.id
    HAVING COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'buyer'), 0) <> -c.charge_micros
        OR COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'supplier'), 0) <> c.supplier_micros
        OR COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'platform'), 0) <> c.fee_micros`;
  for (const c of misclears) {
    violations.push(`clear ${c.id} of ${c.charge} moved buyer ${c.buyer}, supplier ${c.supplier}, platform ${c.fee}`);
  }

  // Probes: a settled probe run is paid by at most one `probe` entry moving exactly its supplier share from a platform
  // account to the supplier (share + fee = charge); a reserved or released one moved nothing; every probe entry has
  // its run; a platform account holds exactly its reserved probes' most expensive answers.
  const misprobed = await tx.$queryRaw<{ id: string; status: string; share: string; platform: string; supplier: string; other: string }[]>`
    SELECT r.id::text, r.status::text, r.supplier_micros::text AS share,
           COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'platform'), 0)::text AS platform,
           COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'supplier'), 0)::text AS supplier,
           COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind NOT IN ('platform', 'supplier')), 0)::text AS other
    FROM probe_runs r
    LEFT JOIN journal_entries je ON je.probe_run_id = r.id
    LEFT JOIN journal_lines jl ON jl.entry_id = je.id
    LEFT JOIN ledger_accounts la ON la.id = jl.ledger_account_id
    GROUP BY r.id
    HAVING r.supplier_micros + r.fee_micros <> r.charge_micros
        OR (r.status <> 'settled' AND r.charge_micros <> 0)
        OR COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'platform'), 0) <> -r.supplier_micros
        OR COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'supplier'), 0) <> r.supplier_micros
        OR COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind NOT IN ('platform', 'supplier')), 0) <> 0`;
  for (const r of misprobed) {
    violations.push(
      `probe run ${r.id} (${r.status}, share ${r.share}) moved platform ${r.platform}, supplier ${r.supplier}, others ${r.other}`,
    );
  }
  const orphanProbes = await tx.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM journal_entries WHERE (kind = 'probe') <> (probe_run_id IS NOT NULL)`;
  for (const e of orphanProbes) violations.push(`journal entry ${e.id} is a probe entry without its probe run, or the reverse`);
  const platformHeld = await tx.$queryRaw<{ id: string; held: string; reserved: string }[]>`
    SELECT la.id::text, la.held_micros::text AS held, COALESCE(r.total, 0)::text AS reserved
    FROM ledger_accounts la
    LEFT JOIN (SELECT platform_account_id, SUM(max_charge_micros) AS total FROM probe_runs WHERE status = 'reserved'
               GROUP BY platform_account_id) r ON r.platform_account_id = la.id
    WHERE la.kind = 'platform' AND la.held_micros <> COALESCE(r.total, 0)`;
  for (const a of platformHeld)
    violations.push(`platform ledger account ${a.id} holds ${a.held} but its reserved probes total ${a.reserved}`);

  // Money out: a pending or sent withdrawal has left the ledger by exactly its amount, a failed one not at all.
  const misdebited = await tx.$queryRaw<{ id: string; status: string; amount: string; paid_out: string }[]>`
    SELECT w.id::text, w.status::text, w.amount_micros::text AS amount,
           COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'external'), 0)::text AS paid_out
    FROM withdrawals w
    LEFT JOIN journal_entries je ON je.withdrawal_id = w.id
    LEFT JOIN journal_lines jl ON jl.entry_id = je.id
    LEFT JOIN ledger_accounts la ON la.id = jl.ledger_account_id
    GROUP BY w.id
    HAVING COALESCE(SUM(jl.amount_micros) FILTER (WHERE la.kind = 'external'), 0)
           <> CASE WHEN w.status = 'failed' THEN 0 ELSE w.amount_micros END`;
  for (const w of misdebited) violations.push(`withdrawal ${w.id} (${w.status}, ${w.amount}) moved ${w.paid_out} out of the ledger`);

  return { ok: violations.length === 0, violations };
}

export async function assertLedgerInvariants(tx?: Tx): Promise<void> {
  const report = await checkLedgerInvariants(tx);
  if (!report.ok) throw new Error(`Ledger invariants violated:\n- ${report.violations.join("\n- ")}`);
}
