import "server-only";

/** Fidelity probes (#23): the platform checks what each offer serves. */
export { runProbeRound, type ProbeRoundOptions, type ProbeRoundReport } from "@/lib/probes/round";
