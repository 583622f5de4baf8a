import "server-only";
import { log } from "@/lib/log";
import { claimJobTick } from "@/lib/ops/leases";
import { metrics } from "@/lib/ops/metrics";
import { isShuttingDown } from "@/lib/ops/shutdown";

type Job = {
  name: string;
  intervalMs: number;
  run: () => Promise<unknown>;
  /** Fleet-wide: a scheduled tick runs only on the instance that wins its lease (lib/ops/leases.ts). */
  leased: boolean;
  running?: Promise<void>;
  timer?: NodeJS.Timeout;
};

const jobs = new Map<string, Job>();
let started = false;

/**
 * Registers (or replaces, on a dev reload) a background job that runs at startup and then every `intervalMs`.
 * A `leased` job's scheduled ticks run once across every instance sharing the database; `runJob` runs it here now.
 */
export function registerJob(name: string, intervalMs: number, run: () => Promise<unknown>, options: { leased?: boolean } = {}): void {
  const previous = jobs.get(name);
  if (previous?.timer) clearInterval(previous.timer);
  const job: Job = { name, intervalMs, run, leased: options.leased ?? false };
  jobs.set(name, job);
  if (started) schedule(job);
}

/** Starts every registered job once per process. Timers are unref'd: they never keep a process alive. */
export function startBackgroundJobs(): void {
  if (started) return;
  started = true;
  for (const job of jobs.values()) schedule(job);
}

export function stopBackgroundJobs(): void {
  started = false;
  for (const job of jobs.values()) {
    if (job.timer) clearInterval(job.timer);
    job.timer = undefined;
  }
}

/** Runs a job now unless it is already running (then waits for that run); errors are logged, never thrown. */
export function runJob(name: string): Promise<void> {
  const job = jobs.get(name);
  if (!job) return Promise.reject(new Error(`no background job named ${name}`));
  return tick(job);
}

function schedule(job: Job) {
  void tick(job, job.leased);
  job.timer = setInterval(() => void tick(job, job.leased), job.intervalMs);
  job.timer.unref();
}

function tick(job: Job, leased = false): Promise<void> {
  if (isShuttingDown()) return Promise.resolve();
  // One run at a time per job: a slow run makes the next ticks skip, not pile up.
  job.running ??= (async () => {
    const started = performance.now();
    try {
      if (leased && (await claimJobTick(job.name, job.intervalMs)) === null) return;
      await job.run();
      metrics.jobRuns.inc({ job: job.name, outcome: "ok" });
      metrics.jobLastSuccess.set({ job: job.name }, Date.now() / 1000);
      log.debug("background job finished", { job: job.name, ms: Math.round(performance.now() - started) });
    } catch (error) {
      metrics.jobRuns.inc({ job: job.name, outcome: "error" });
      log.error("background job failed", { job: job.name, error });
    } finally {
      job.running = undefined;
    }
  })();
  return job.running;
}
