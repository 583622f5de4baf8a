/**
 * `node --import ./server/server-modules.mjs …`: lets a plain Node process (the custom server that hosts Next, the
 * dev and bench scripts) load the app's server modules. They start with `import "server-only"`, which throws outside
 * a server bundle; a server process is exactly where they belong, so here that import resolves to nothing.
 */
import { register } from "node:module";

const hooks = `export async function resolve(specifier, context, next) {
  if (specifier === "server-only") return { url: "data:text/javascript,", shortCircuit: true };
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
