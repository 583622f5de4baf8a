import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * The layering README's Architecture states is kept by `npm run lint` (eslint.config.mjs); these cases show each rule
 * refusing what it exists to refuse, so a config change that silently disables one fails here, not in review.
 * Probe files are linted as text under a path where they would live; none is written to disk.
 */

const eslint = new ESLint({ cwd: process.cwd() });

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe("npm run lint refuses", () => {
  it("a domain module that imports lib/http, app/ or server/", async () => {
    const found = await problems(
      "lib/market/probe.ts",
      'import "server-only";\nimport { errorStatus } from "@/lib/http/errors";\nimport { API_ROUTES } from "@/app/api-routes";\nimport { DIRECT_ROUTES } from "@/server/direct-routes";\nexport const probe = [errorStatus, API_ROUTES, DIRECT_ROUTES];\n',
    );
    expect(found).toEqual([
      expect.stringMatching(/^import-x\/no-restricted-paths: .*lib\/http\/errors.*lib\/market\/ imports only the rooms below it/),
      expect.stringMatching(/^import-x\/no-restricted-paths: .*app\/api-routes.*never import app\//),
      expect.stringMatching(/^import-x\/no-restricted-paths: .*server\/direct-routes.*never import server\//),
    ]);
  }, 60_000);

  /**
   * The order of lib/'s rooms, as issue #35 fixed it (upstream < supply < market < {router, probes} < http, with the
   * ledger, the chain and operations beneath every domain): stated here on its own, so that a change to LIB_ORDER in
   * eslint.config.mjs that moves a room, or drops a zone, fails here. For each room a probe module imports one
   * module of every other room: exactly the rooms above it and its peers are refused, every room below is accepted.
   */
  const ORDER: string[][] = [
    ["base", "chain", "db"],
    ["ledger"],
    ["ops"],
    ["payments", "upstream"],
    ["supply"],
    ["market"],
    ["auth"],
    ["account"],
    ["router", "probes"],
    ["browser"],
    ["http"],
  ];
  /** A module of each room (anything that resolves). */
  const MODULE: Record<string, string> = {
    base: "@/lib/money",
    chain: "@/lib/chain/constants",
    db: "@/lib/db/client",
    ledger: "@/lib/ledger/accounts",
    ops: "@/lib/ops/metrics",
    payments: "@/lib/payments/amount",
    upstream: "@/lib/upstream/tokens",
    supply: "@/lib/supply/capacity",
    market: "@/lib/market/book",
    auth: "@/lib/auth/tokens",
    account: "@/lib/account/usage",
    router: "@/lib/router/complete",
    probes: "@/lib/probes/catalog",
    browser: "@/lib/browser/settings",
    http: "@/lib/http/route",
  };
  const rooms = ORDER.flat();

  it.each(rooms)(
    "an import against the order from lib/%s/ (or lib/'s own files)",
    async (room) => {
      const rank = ORDER.findIndex((tier) => tier.includes(room));
      // Peers refuse each other; lib/'s own files are the base the database and the chain stand on, and import both.
      const refused = rooms.filter((other) => {
        const otherRank = ORDER.findIndex((tier) => tier.includes(other));
        return other !== room && (otherRank > rank || (otherRank === rank && other !== "base" && room !== "base"));
      });
      const others = rooms.filter((other) => other !== room);
      const code =
        (room === "browser" ? "" : 'import "server-only";\n') +
        others.map((other, i) => `import * as m${i} from "${MODULE[other]}";`).join("\n") +
        `\nexport const probe = [${others.map((_, i) => `m${i}`).join(", ")}];\n`;
      const path = room === "base" ? "lib/probe.ts" : `lib/${room}/probe.ts`;
      const found = (await problems(path, code)).filter((p) => p.includes("LIB_ORDER"));
      const refusedModules = found.map((p) => Object.values(MODULE).find((m) => p.includes(`"${m}"`)));
      expect(refusedModules.sort()).toEqual(refused.map((other) => MODULE[other]).sort());
    },
    120_000,
  );

  it("a browser component that imports a server module, and accepts the client-safe ones", async () => {
    const found = await problems(
      "components/market/probe.tsx",
      '"use client";\nimport { db } from "@/lib/db/client";\nimport { burnMicroDiem } from "@/lib/money";\nimport { MarketStatsSchema } from "@/lib/market/schemas";\nexport const probe = [db, burnMicroDiem, MarketStatsSchema];\n',
    );
    expect(found).toEqual([expect.stringMatching(/^import-x\/no-restricted-paths: .*@\/lib\/db.*client-safe/)]);
  }, 60_000);

  it("a server module of lib/ without server-only, and a client-safe one with it", async () => {
    expect(await problems("lib/market/probe.ts", "export const probe = 1;\n")).toEqual([expect.stringMatching(/^svc\/server-only: /)]);
    expect(await problems("lib/market/schemas.ts", 'import "server-only";\nexport const probe = 1;\n')).toEqual([
      expect.stringMatching(/^svc\/server-only: A client-safe module/),
    ]);
  }, 60_000);

  it("process.env read outside lib/env.ts", async () => {
    const found = await problems("lib/market/probe.ts", 'import "server-only";\nexport const probe = process.env.SVC_X;\n');
    expect(found).toEqual([expect.stringMatching(/^no-restricted-properties: .*lib\/env\.ts/)]);
  }, 60_000);
});
