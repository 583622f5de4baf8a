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
  it("a domain module that imports lib/http or app/", async () => {
    const found = await problems(
      "lib/market/probe.ts",
      'import "server-only";\nimport { errorStatus } from "@/lib/http/errors";\nimport { API_ROUTES } from "@/app/api-routes";\nexport const probe = [errorStatus, API_ROUTES];\n',
    );
    expect(found).toEqual([
      expect.stringMatching(/^import-x\/no-restricted-paths: .*lib\/http\/errors.*a domain never imports lib\/http/),
      expect.stringMatching(/^import-x\/no-restricted-paths: .*app\/api-routes.*never import app\//),
    ]);
  }, 60_000);

  it("a browser component that imports a server module, and accepts the client-safe ones", async () => {
    const found = await problems(
      "components/market/probe.tsx",
      '"use client";\nimport { db } from "@/lib/db";\nimport { burnMicroDiem } from "@/lib/money";\nimport { MarketStatsSchema } from "@/lib/market/schemas";\nexport const probe = [db, burnMicroDiem, MarketStatsSchema];\n',
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
