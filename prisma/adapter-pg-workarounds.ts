/**
 * Workarounds for Prisma 6.19's JS schema engine (`engine: "js"`) on @prisma/adapter-pg 6.19.
 * Everything Prisma-version-specific lives here so it can be deleted in one place on upgrade.
 * Upstream: prisma/prisma#27577 (driver-adapter schema engine on PostgreSQL: unsupported `name`/`"char"`
 * catalog columns, statement splitting, shadow database lifetime) and the CLI's lingering timer.
 *
 * 1. The schema engine reads pg_catalog columns of type `name` (oid 19) and `"char"` (oid 18), which
 *    the adapter cannot deserialize: a pg Client subclass reports them as `text` (their text form is the value).
 * 2. The adapter's `executeScript` splits on `;`, breaking dollar-quoted function bodies: send the script whole
 *    (simple query protocol runs several statements in one round trip).
 * 3. The adapter drops its temporary shadow database before closing the pool that is still connected to it:
 *    our own `connectToShadowDb` uses one fixed shadow database, wiped (WITH (FORCE)) on every call.
 * 4. The CLI keeps running 10-60 s after it finished because of a long referenced timer: unref long timers.
 */
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";

const CHAR_OID = 18;
const NAME_OID = 19;
const TEXT_OID = 25;
const LONG_TIMER_MS = 5_000;

type Result = { fields?: { dataTypeID: number }[] };

function reportCatalogTypesAsText<T>(result: T): T {
  for (const r of (Array.isArray(result) ? result : [result]) as Result[]) {
    for (const field of r?.fields ?? []) {
      if (field.dataTypeID === NAME_OID || field.dataTypeID === CHAR_OID) field.dataTypeID = TEXT_OID;
    }
  }
  return result;
}

class CatalogTextClient extends pg.Client {
  // pg's query() has callback, promise and submittable forms; adapt the first two.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const last = args[args.length - 1];
    if (typeof last === "function") {
      args[args.length - 1] = (err: Error | null, res: unknown) => last(err, err ? res : reportCatalogTypesAsText(res));
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    const out = (super.query as (...a: unknown[]) => unknown)(...args);
    return out instanceof Promise ? out.then(reportCatalogTypesAsText) : out;
  }
}

function sendScriptsWhole(adapter: SqlDriverAdapter): SqlDriverAdapter {
  adapter.executeScript = async (script: string) => {
    await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
  };
  return adapter;
}

function unrefLongTimers() {
  const original = globalThis.setTimeout;
  const patched = ((handler: (...a: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
    const timer = original(handler, ms, ...rest);
    if ((ms ?? 0) >= LONG_TIMER_MS) timer.unref?.();
    return timer;
  }) as typeof setTimeout;
  globalThis.setTimeout = Object.assign(patched, original);
}

/** The migration-aware adapter factory that `prisma.config.ts` hands to the CLI. */
export function createMigrationAdapter(connectionString: string): SqlMigrationAwareDriverAdapterFactory {
  unrefLongTimers();
  // allowExitOnIdle: an idle pooled connection must not keep the CLI alive for pg's 10 s idle timeout.
  const poolConfig = { connectionString, Client: CatalogTextClient, max: 4, allowExitOnIdle: true };
  const main = new PrismaPg(poolConfig);

  return {
    provider: main.provider,
    adapterName: main.adapterName,
    connect: async () => sendScriptsWhole(await main.connect()),
    async connectToShadowDb() {
      // One fixed shadow database per main database, wiped on every call: nothing is left behind even when
      // the engine never disposes the adapter, and a crashed run is cleaned up by the next one.
      const url = new URL(connectionString);
      const database = `${url.pathname.slice(1) || "postgres"}_prisma_shadow`;
      const admin = new pg.Client({ connectionString });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
        await admin.query(`CREATE DATABASE "${database}"`);
      } finally {
        await admin.end();
      }
      url.pathname = `/${database}`;
      return sendScriptsWhole(await new PrismaPg({ ...poolConfig, connectionString: url.toString() }).connect());
    },
  };
}
