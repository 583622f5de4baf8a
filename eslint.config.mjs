/**
 * `npm run lint`: the house's layering, kept by a tool rather than by a reminder in the README. Formatting is
 * Prettier's (`.prettierrc.json`); this file checks what a formatter cannot:
 *
 * - Client-safe modules (CLIENT_SAFE below: what a browser bundle and the agent CLI may load) import only other
 *   client-safe modules and packages, and never start with `import "server-only"`. Every other `lib/` module does
 *   start with it, so Next refuses to build a browser bundle that reaches one.
 * - `components/` (but the server-rendered docs) and `lib/browser/` import only client-safe `lib/` modules.
 * - Nothing under `components/` or `lib/` imports `app/` or `server/`, and the rooms of `lib/` import each other in one
 *   order (LIB_ORDER below): never a room above, never a peer. The edge (`lib/http/`) is the top: it maps the
 *   domains' errors to statuses, not the other way round.
 * - No import cycle anywhere.
 */
import js from "@eslint/js";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import nextPlugin from "@next/eslint-plugin-next";
import importX from "eslint-plugin-import-x";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

const ROOT = import.meta.dirname;
/** import-x matches a glob `from` and its `except` against absolute paths. */
const abs = (glob) => `${ROOT}/${glob.includes("*") ? glob : `${glob}{,x}`}`;

/** Importable by the browser and the agent CLI: pure code, zod schemas, wire units, constants. */
const CLIENT_SAFE = [
  "lib/browser/**",
  "lib/*/schemas.ts",
  "lib/router/responses-schemas.ts",
  "lib/market/provider-schemas.ts",
  "lib/api-error.ts",
  "lib/errors.ts",
  "lib/money.ts",
  "lib/wire.ts",
  "lib/chain/constants.ts",
  "lib/chain/dev-wallet.ts",
  "lib/chain/usdc-abi.ts",
  "lib/auth/siwe-message.ts",
];

/**
 * Shared with the project's plain Node tools, which load no server module: the reference upstream (a stand-in for
 * a provider, run by the e2e stack and `npm run upstream`) counts tokens as svc does; `npm run chain` and the e2e
 * fixtures read the dev stack's generated keys as the app does. Not for the browser (node:fs).
 */
const NODE_TOOLS = ["lib/upstream/tokens.ts", "lib/chain/dev-keys.ts"];

/** Server components: the docs pages render on the server (they start with `import "server-only"` themselves). */
const SERVER_COMPONENTS = ["components/docs/**"];
const CLIENT_COMPONENTS_IN_SERVER_FOLDERS = ["components/docs/docs-search.tsx", "components/docs/docs-toc.tsx"];

/**
 * The rooms of lib/, lowest first. A module may import its own room and any room below it, never one above it, and
 * never another room of its own tier (peers stay independent). The base tier is lib/'s own files (configuration,
 * errors, money, wire units), the database clients (lib/db/) and the chain's facts and clients (lib/chain/): every
 * room stands on it and it imports no room. Then the ledger and operations, beneath every domain; then the domains in
 * the order of a request's dependencies: what an upstream answers, what a supplier offers, the market made of offers,
 * who is calling, their account, and the two that act on all of it, the router and the probes; the browser's library;
 * and the edge (lib/http/), which maps every domain's errors to statuses.
 */
export const LIB_ORDER = [
  ["chain", "db"],
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

/** `import "server-only"` as the module's first statement, exactly when the module is not client-safe. */
const serverOnlyRule = {
  meta: {
    type: "problem",
    docs: { description: "lib/ modules declare whether a browser may load them" },
    schema: [{ type: "object", properties: { clientSafe: { type: "boolean" } }, additionalProperties: false }],
    messages: {
      missing:
        'A server module of lib/ starts with `import "server-only"` (or, if the browser needs it, is listed as client-safe in eslint.config.mjs).',
      forbidden: 'A client-safe module must not import "server-only".',
    },
  },
  create(context) {
    const clientSafe = context.options[0]?.clientSafe ?? false;
    return {
      Program(program) {
        const isServerOnly = (node) =>
          node?.type === "ImportDeclaration" && node.source.value === "server-only" && node.specifiers.length === 0;
        const first = program.body[0];
        if (clientSafe) {
          const marker = program.body.find(isServerOnly);
          if (marker) context.report({ node: marker, messageId: "forbidden" });
        } else if (!isServerOnly(first)) {
          context.report({ node: first ?? program, messageId: "missing" });
        }
      },
    };
  },
};

const svc = { rules: { "server-only": serverOnlyRule } };

/** The zones of import-x/no-restricted-paths: `target` may not import `from` (paths relative to the repo). */
const zones = [
  // Client-safe modules stay client-safe all the way down.
  {
    target: CLIENT_SAFE,
    from: abs("lib/**"),
    except: CLIENT_SAFE.map(abs),
    message: "client-safe modules import only client-safe modules",
  },
  // Client components and the browser's lib import only client-safe lib modules.
  {
    target: ["components/**", ...CLIENT_COMPONENTS_IN_SERVER_FOLDERS],
    from: abs("lib/**"),
    except: CLIENT_SAFE.map(abs),
    message: "a browser component imports only client-safe lib modules (eslint.config.mjs CLIENT_SAFE)",
  },
  // Arrows run down: app → components → lib, never back up.
  { target: ["components", "lib"], from: "app", message: "components/ and lib/ never import app/" },
  {
    target: ["components", "lib"],
    from: "server",
    message: "components/ and lib/ never import server/: the process wires lib/, not the other way round",
  },
  { target: "lib", from: "components", message: "lib/ never imports components/" },
  // lib/'s own files are the base tier, with lib/db/ and lib/chain/: they import no room above it.
  {
    target: "lib/*.ts",
    from: LIB_ORDER.slice(1)
      .flat()
      .map((room) => `lib/${room}`),
    message: "lib/'s own modules are the base: beneath every room of lib/ but db and chain (eslint.config.mjs LIB_ORDER)",
  },
  // Each room imports only rooms below it (LIB_ORDER); peers of one tier never import each other.
  ...LIB_ORDER.flatMap((tier, rank) =>
    tier
      .map((room) => ({
        target: `lib/${room}`,
        from: [...tier.filter((peer) => peer !== room), ...LIB_ORDER.slice(rank + 1).flat()].map((other) => `lib/${other}`),
        message: `lib/${room}/ imports only the rooms below it (eslint.config.mjs LIB_ORDER: ${LIB_ORDER.map((t) => t.join(", ")).join(" < ")})`,
      }))
      .filter((zone) => zone.from.length > 0),
  ),
];

export default tseslint.config(
  {
    ignores: [".next/**", "node_modules/**", ".data/**", "test-results/**", "playwright-report/**", "next-env.d.ts", "tests/fixtures/**"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx,mjs}"],
    plugins: { "import-x": importX, svc },
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
    settings: {
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "./tsconfig.json" })],
      // no-cycle reads the modules an import reaches: they are TypeScript.
      "import-x/extensions": [".ts", ".tsx", ".mjs", ".js"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx"] },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "import-x/no-restricted-paths": ["error", { zones }],
      "import-x/no-self-import": "error",
      "import-x/no-duplicates": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports", disallowTypeAnnotations: false }],
      // lib/env.ts reads the environment once; launchers and test orchestration that hand configuration to the
      // processes they start say so where they do it.
      "no-restricted-properties": ["error", { object: "process", property: "env", message: "read configuration through lib/env.ts" }],
    },
  },
  { files: ["lib/env.ts"], rules: { "no-restricted-properties": "off" } },
  {
    files: ["app/**/*.tsx", "components/**/*.tsx"],
    plugins: { "react-hooks": reactHooks, "@next/next": nextPlugin },
    rules: {
      ...nextPlugin.configs["core-web-vitals"].rules,
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
    },
  },
  // Server components of components/ (the docs) may read server modules, but still never app/.
  {
    files: SERVER_COMPONENTS,
    ignores: CLIENT_COMPONENTS_IN_SERVER_FOLDERS,
    rules: {
      "import-x/no-restricted-paths": ["error", { zones: zones.filter((zone) => !String(zone.message).startsWith("a browser component")) }],
    },
  },
  {
    files: ["lib/**/*.{ts,tsx}"],
    ignores: [...CLIENT_SAFE, ...NODE_TOOLS],
    rules: { "svc/server-only": ["error", { clientSafe: false }] },
  },
  { files: CLIENT_SAFE, rules: { "svc/server-only": ["error", { clientSafe: true }] } },
  // Node scripts and configs (plain ESM).
  { files: ["**/*.mjs"], languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } } },
);
