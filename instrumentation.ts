/**
 * Next.js calls `register()` once when a server instance starts, in each runtime it builds for. Background jobs
 * need the database and the chain, so they start only in the Node.js runtime. The literal `process.env.NEXT_RUNTIME`
 * check (Next's documented pattern, rather than lib/env.ts) is what lets the bundler drop the Node-only imports
 * from the Edge build.
 */
export async function register() {
  // eslint-disable-next-line no-restricted-properties -- Next's documented runtime check (see above)
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startServerJobs } = await import("@/server/background-jobs");
    startServerJobs();
  }
}
