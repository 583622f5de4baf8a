/**
 * CPU time from /proc, for the benchmarks: what a server process tree and the PostgreSQL server spent, which a
 * shared 2-core machine's wall-clock figures cannot tell apart (a slow spell moves every latency, but not the CPU
 * a request costs). Linux only: elsewhere every reading is null and the benchmarks print "n/a".
 */
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc's utime and stime: 100 on every Linux this runs on (`getconf CLK_TCK`). */
const TICKS_PER_S = 100;

type Proc = { ppid: number; comm: string; cpuMs: number };
export type CpuSnapshot = Map<number, Proc>;

export function readCpu(): CpuSnapshot | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const procs: CpuSnapshot = new Map();
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // exited between the listing and the read
    }
    // "pid (comm) state ppid ... utime stime ...": comm may hold spaces and parentheses, so split after the last ")".
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    procs.set(Number(pid), { ppid: Number(fields[1]), comm, cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S });
  }
  return procs;
}

/** CPU ms of `root` and every process below it (tsx runs the app in a child of its launcher). */
export function treeCpuMs(snapshot: CpuSnapshot, root: number): number {
  let total = 0;
  for (const [pid, proc] of snapshot) {
    for (let p: number | undefined = pid, depth = 0; p !== undefined && p > 1 && depth < 8; p = snapshot.get(p)?.ppid, depth++) {
      if (p === root) {
        total += proc.cpuMs;
        break;
      }
    }
  }
  return total;
}

/**
 * PostgreSQL CPU ms between two snapshots, per process alive in both: a process that exited in between (an idle
 * pooled connection closed, an autovacuum worker done) would otherwise subtract all its CPU from the sum.
 */
function postgresCpuDeltaMs(before: CpuSnapshot, after: CpuSnapshot, backends?: ReadonlySet<number>): number {
  let total = 0;
  for (const [pid, proc] of after) {
    if (proc.comm !== "postgres" || (backends && !backends.has(pid))) continue;
    const earlier = before.get(pid);
    if (earlier && earlier.comm === "postgres") total += proc.cpuMs - earlier.cpuMs;
  }
  return total;
}

/** The client backends connected to the databases whose names start with this one's (the --baseline database too). */
export async function benchBackends(query: (sql: string) => Promise<{ pid: number }[]>): Promise<Set<number>> {
  const rows = await query(
    "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND (datname = current_database() OR datname LIKE current_database() || '\\_%')",
  );
  return new Set(rows.map((r) => Number(r.pid)));
}

/** CPU µs per request of a server tree and of PostgreSQL between two snapshots (null when /proc is not there). */
export function cpuPerRequest(
  before: CpuSnapshot | null,
  after: CpuSnapshot | null,
  root: number | undefined,
  requests: number,
  backends?: ReadonlySet<number>,
): { serverUs: number | null; postgresUs: number } | null {
  if (!before || !after || requests <= 0) return null;
  const per = (ms: number) => (ms * 1000) / requests;
  return {
    serverUs: root === undefined ? null : per(treeCpuMs(after, root) - treeCpuMs(before, root)),
    postgresUs: per(postgresCpuDeltaMs(before, after, backends)),
  };
}
