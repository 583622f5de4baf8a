import { afterAll, afterEach } from "vitest";
import { assertLedgerInvariants } from "@/lib/ledger/invariants";
import { db } from "@/lib/db/client";
import { closePgPool } from "@/lib/db/pool";

// No request, crash or retry may create or destroy money: the ledger invariants hold after every test.
afterEach(async () => {
  await assertLedgerInvariants();
});

afterAll(async () => {
  await db.$disconnect();
  await closePgPool();
});
