/**
 * `node scripts/with-env.mjs [NAME=value | NAME?=value]… <package bin | file> [args…]`: the portable form of an npm
 * script's `NAME=value command` prefix, which cmd.exe and PowerShell (npm's shells on Windows) do not understand.
 *
 * - `NAME=value` sets the variable; `NAME?=value` sets it only when it is unset or empty (the shell's
 *   `${NAME:-value}`).
 * - Always, unless already set: NEXT_TELEMETRY_DISABLED=1 and CHECKPOINT_DISABLE=1 (Next.js and Prisma phone home
 *   otherwise; CI and offline machines wait on it).
 * - The command runs in this same process (no child, no shell): a package's bin (`next`, `prisma`, `vitest`, `tsx`,
 *   `playwright`) resolved from node_modules, or a script file (.ts when node runs with tsx's loader). So signals
 *   reach it as they would reach the command.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import Module from "node:module";

const QUIET = { NEXT_TELEMETRY_DISABLED: "1", CHECKPOINT_DISABLE: "1" };

const args = process.argv.slice(2);
// eslint-disable-next-line no-restricted-properties -- a launcher: it hands configuration to the command it runs
const env = process.env;
while (args.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*\??=/.test(args[0])) {
  const assignment = args.shift();
  const [name, value] = splitAssignment(assignment);
  if (name.endsWith("?")) {
    const key = name.slice(0, -1);
    if (!env[key]) env[key] = value;
  } else {
    env[name] = value;
  }
}
for (const [name, value] of Object.entries(QUIET)) env[name] ??= value;

const [command, ...rest] = args;
if (!command) {
  console.error("usage: node scripts/with-env.mjs [NAME=value | NAME?=value]… <package bin | file> [args…]");
  process.exit(2);
}
const entry = resolveEntry(command);
process.argv = [process.argv[0], entry, ...rest];
// As `node <entry>` would: CommonJS bins that check `require.main === module` (prisma's) run too.
Module.runMain(entry);

function splitAssignment(text) {
  const at = text.indexOf("=");
  return [text.slice(0, at), text.slice(at + 1)];
}

/** A file as given, or the bin of the package named `command` (the one bin, or the one named after the package). */
function resolveEntry(command) {
  if (/\.[cm]?[jt]s$/.test(command) && existsSync(command)) return path.resolve(command); // .ts under tsx's loader
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, "node_modules", command, "package.json");
    if (existsSync(manifest)) {
      const { bin } = JSON.parse(readFileSync(manifest, "utf8"));
      const name = command.split("/").pop();
      const file = typeof bin === "string" ? bin : (bin?.[name] ?? Object.values(bin ?? {})[0]);
      if (!file) throw new Error(`${command} has no bin to run`);
      return path.join(path.dirname(manifest), file);
    }
    if (path.dirname(dir) === dir) throw new Error(`${command}: not a file, nor a package in node_modules (run npm install)`);
  }
}
