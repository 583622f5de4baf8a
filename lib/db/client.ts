import "server-only";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@prisma/client";
import pg from "pg";
import { hearDatabaseErrors } from "@/lib/db/errors";
import { pgConfig, registerPool } from "@/lib/db/pools";
import { processState } from "@/lib/process-state";

export { Prisma } from "@prisma/client";

/** A client usable both at the top level and inside `db.$transaction(async (tx) => …)`. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

function createPrismaClient() {
  // Our own pool, so /metrics can report its use (svc_db_pool_connections).
  const pool = new pg.Pool({ ...pgConfig(), max: 10 });
  hearDatabaseErrors(pool, "prisma");
  registerPool("prisma", pool);
  const adapter = new PrismaPg(pool);
  return new PrismaClient({ adapter });
}

// One client per process, created on first use (so `next build` can import routes without a database);
// it is process state (lib/process-state.ts): Next.js dev reloads modules, and the host process loads its own copy.
const holder = processState<{ client?: PrismaClient }>("prisma", () => ({}));

function client(): PrismaClient {
  return (holder.client ??= createPrismaClient());
}

export const db: PrismaClient = new Proxy({} as PrismaClient, {
  get(_target, property) {
    const c = client();
    const value = Reflect.get(c, property, c);
    return typeof value === "function" ? value.bind(c) : value;
  },
});
