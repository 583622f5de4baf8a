import { db } from "../lib/db/client";
import { exitAfterOutput } from "./process-utils";

/**
 * Runs an operator command that uses the database (`npm run catalog`, `npm run probes`): its exit code is what `main`
 * returns, 1 with the message when it throws; the database pool is closed either way, so the process can exit.
 */
export function runDbCommand(main: () => Promise<number>): void {
  // Asynchronous even when opening the client throws (no database configured): one message, not a second crash.
  const disconnect = () => Promise.resolve().then(() => db.$disconnect());
  main()
    .then(async (code) => {
      await disconnect();
      exitAfterOutput(code);
    })
    .catch(async (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      // The command's own error is the one reported; a pool that also fails to close changes nothing about the exit.
      await disconnect().catch((closing: unknown) => {
        if (closing !== error && (closing as Error)?.message !== (error as Error)?.message)
          console.error("also failed to close the database pool:", closing);
      });
      exitAfterOutput(1);
    });
}
