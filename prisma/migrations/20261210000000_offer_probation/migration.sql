-- Probation (#37): a new or changed offer is "verifying" (off the book, offers.probe_delisted) until its first probe set
-- passes; "unverified" when probes could not run for it (it serves).
ALTER TYPE "probe_status" ADD VALUE IF NOT EXISTS 'verifying';
ALTER TYPE "probe_status" ADD VALUE IF NOT EXISTS 'unverified';

-- The operator funding the platform's probe account (npm run probes -- --fund, and the dev stack at start).
ALTER TYPE "journal_entry_kind" ADD VALUE IF NOT EXISTS 'probe_funding';
