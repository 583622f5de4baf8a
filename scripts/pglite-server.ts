/**
 * Serves PGlite over the Postgres wire protocol for several clients: pglite-socket's server with a
 * batch-aware query queue.
 *
 * Why not the stock queue: PGlite is ONE backend. pglite-socket 0.1.x interleaves messages from different
 * connections between transactions, so one client's Parse/Bind/Execute/Sync batch can be split by another's
 * Parse, which replaces the shared unnamed prepared statement ("unnamed prepared statement does not exist").
 * This queue hands the backend to one connection from its first message until its batch ends (Sync or a
 * simple Query) outside a transaction, which is what a real server's separate backends guarantee. "Outside a
 * transaction" is read from the backend's own ReadyForQuery status, so a failed transaction ('E', which PGlite's
 * isInTransaction() does not report) keeps its connection until it rolls back.
 *
 * Usage: tsx scripts/pglite-server.ts --db=<dir|memory://> --port=<n> [--host=127.0.0.1]
 * A new data folder is initialized in a temporary folder renamed into place when complete (openDatabase).
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

const QUERY = 0x51; // 'Q': simple query (a complete batch)
const SYNC = 0x53; // 'S': ends an extended-protocol batch
const TERMINATE = 0x58; // 'X'

type Item = {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: unknown) => void;
};

const READY_FOR_QUERY = 0x5a; // 'Z', whose status byte is 'I' idle, 'T' in a transaction, 'E' in a failed one
const IDLE = 0x49; // 'I'

export class BatchAwareQueue {
  private waiting: Item[] = [];
  private owner: number | null = null;
  private pumping = false;
  /** The backend's transaction status from its last ReadyForQuery: a failed transaction ('E') still owns it. */
  private status = IDLE;
  /** Connections whose current extended-protocol batch failed: the rest of the batch is skipped until Sync. */
  private failedBatches = new Set<number>();

  constructor(private readonly db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ handlerId, message, onData, resolve, reject });
      void this.pump();
    });
  }

  getQueueLength(): number {
    return this.waiting.length;
  }

  clearQueueForHandler(handlerId: number): void {
    this.waiting = this.waiting.filter((item) => {
      if (item.handlerId !== handlerId) return true;
      item.reject(new Error("Handler disconnected"));
      return false;
    });
  }

  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) return;
    if (this.db.isInTransaction() || this.status !== IDLE) await this.db.exec("ROLLBACK");
    this.status = IDLE;
    this.failedBatches.delete(handlerId);
    this.owner = null;
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (;;) {
        const index = this.owner === null ? 0 : this.waiting.findIndex((i) => i.handlerId === this.owner);
        if (index === -1 || this.waiting.length === 0) return;
        const [item] = this.waiting.splice(index, 1);
        try {
          const chunks: Uint8Array[] = [];
          await this.db.runExclusive(() => this.db.execProtocolRawStream(item.message, { onRawData: (d) => chunks.push(d) }));
          const out = this.conformToProtocol(item, Buffer.concat(chunks));
          this.noteStatus(out);
          if (out.length > 0) item.onData(out);
          item.resolve(out.length);
        } catch (error) {
          item.reject(error);
        }
        const idle = this.status === IDLE && !this.db.isInTransaction();
        this.owner = endsBatch(item.message) && idle ? null : item.handlerId;
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * PGlite answers an error inside an extended-protocol batch with ErrorResponse AND ReadyForQuery at once,
   * then another ReadyForQuery at the Sync: the client would take the second one as the end of its NEXT query
   * and every later answer on that connection would be off by one. A real server sends nothing after the error
   * until the Sync; so do we: drop the early ReadyForQuery and the answers to the rest of the batch.
   */
  private conformToProtocol(item: Item, out: Buffer): Buffer {
    const completesBatch = endsBatch(item.message);
    if (completesBatch) {
      this.failedBatches.delete(item.handlerId);
      return out;
    }
    if (this.failedBatches.has(item.handlerId)) return Buffer.alloc(0);
    if (!hasErrorResponse(out)) return out;
    this.failedBatches.add(item.handlerId);
    return endsWithReadyForQuery(out) ? out.subarray(0, out.length - 6) : out;
  }

  /** ReadyForQuery ends every response to a Sync or a simple Query: remember its transaction status. */
  private noteStatus(data: Uint8Array) {
    if (endsWithReadyForQuery(data)) this.status = data[data.length - 1];
  }
}

const ERROR_RESPONSE = 0x45; // 'E'

function endsWithReadyForQuery(data: Uint8Array): boolean {
  const n = data.length;
  return n >= 6 && data[n - 6] === READY_FOR_QUERY && data[n - 5] === 0 && data[n - 4] === 0 && data[n - 3] === 0 && data[n - 2] === 5;
}

function hasErrorResponse(data: Buffer): boolean {
  for (let i = 0; i + 5 <= data.length; i += 1 + data.readInt32BE(i + 1)) {
    if (data[i] === ERROR_RESPONSE) return true;
  }
  return false;
}

function endsBatch(message: Uint8Array): boolean {
  const type = message[0];
  // A startup or SSL request has no type byte: its first byte is the high byte of its length (0).
  return type === QUERY || type === SYNC || type === TERMINATE || type === 0;
}

async function main() {
  const { values } = parseArgs({
    options: {
      db: { type: "string", default: "memory://" },
      port: { type: "string", default: "5432" },
      host: { type: "string", default: "127.0.0.1" },
      "max-connections": { type: "string", default: "20" },
    },
  });
  // Until the server listens, a signal just ends the process: an initialization in progress is in a temporary
  // folder (openDatabase), which the next start removes; the data folder itself is never half-written.
  let shutdown: () => unknown = () => process.exit(0);
  process.on("SIGTERM", () => void shutdown());
  process.on("SIGINT", () => void shutdown());

  const db = await openDatabase(values.db!);
  const server = new PGLiteSocketServer({
    db,
    port: Number(values.port),
    host: values.host,
    maxConnections: Number(values["max-connections"]),
  });
  // The server hands its queue to each connection's handler as it arrives; swap in ours before any does.
  (server as unknown as { queryQueue: BatchAwareQueue }).queryQueue = new BatchAwareQueue(db);
  await server.start();
  console.log(`pglite-server listening on ${values.host}:${values.port}`);

  shutdown = async () => {
    await server.stop();
    await db.close();
    process.exit(0);
  };
}

/**
 * Opens the database at `dir`. A folder that does not exist yet (or is empty) is first initialized in a temporary
 * folder beside it (`<dir>.init-<pid>`), closed, and renamed into place: PGlite's initdb takes 10 s to a minute on a
 * busy machine, and a process killed during it (Ctrl-C, a crash) then leaves only a temporary folder the next start
 * removes (scripts/embedded-db.ts), never a half-initialized data folder that later fails to open (PGlite aborts
 * with `RuntimeError: Aborted()` on one). Each phase is printed as a `phase:` line the parent shows as progress.
 */
async function openDatabase(dir: string): Promise<PGlite> {
  if (dir.startsWith("memory://")) return PGlite.create(dir);
  if (!existsSync(dir) || readdirSync(dir).length === 0) {
    const temporary = `${dir}.init-${process.pid}`;
    rmSync(temporary, { recursive: true, force: true });
    mkdirSync(path.dirname(dir), { recursive: true });
    console.log(`phase: initializing a new database in ${temporary}`);
    const started = Date.now();
    const fresh = await PGlite.create(temporary);
    await fresh.close();
    rmSync(dir, { recursive: true, force: true }); // an empty folder left by an older version
    renameSync(temporary, dir);
    console.log(`phase: initialized in ${((Date.now() - started) / 1000).toFixed(1)} s, moved into ${dir}`);
  }
  console.log(`phase: opening ${dir}`);
  return PGlite.create(dir);
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
