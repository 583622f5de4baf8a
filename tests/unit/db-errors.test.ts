import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "@/lib/db/errors";

/** What each client throws when the database is away, and errors that must stay 500s (or their own AppError). */
describe("isDatabaseUnavailable", () => {
  const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, syscall: "connect" });

  it.each([
    ["pg: a dropped connection", new Error("Connection terminated unexpectedly")],
    ["pg: the pool's connect timeout", new Error("timeout exceeded when trying to connect")],
    [
      "pg: the server restarting",
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01", severity: "FATAL" }),
    ],
    ["pg: starting up", Object.assign(new Error("the database system is starting up"), { code: "57P03" })],
    ["pg: too many connections", Object.assign(new Error("sorry, too many clients already"), { code: "53300" })],
    ["pg: a connection exception class", Object.assign(new Error("connection failure"), { code: "08006" })],
    ["a refused socket", socketError("ECONNREFUSED")],
    ["Prisma: can't reach", Object.assign(new Error("Can't reach database server"), { code: "P1001" })],
    ["Prisma: pool timeout", Object.assign(new Error("Timed out fetching a new connection"), { code: "P2024" })],
    [
      "Prisma raw query with the adapter's kind",
      Object.assign(new Error("Raw query failed"), {
        code: "P2010",
        meta: { driverAdapterError: { cause: { kind: "DatabaseNotReachable" } } },
      }),
    ],
    ["wrapped as a cause", new Error("clear failed", { cause: new Error("Connection terminated unexpectedly") })],
  ])("%s", (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ["a statement the database refused", Object.assign(new Error("value out of range for type integer"), { code: "22003" })],
    ["a unique violation through Prisma", Object.assign(new Error("Unique constraint failed"), { code: "P2002" })],
    ["a deadlock", Object.assign(new Error("deadlock detected"), { code: "40P01" })],
    ["a plain bug", new TypeError("Cannot read properties of undefined")],
    ["a socket code without a syscall (not a socket error)", Object.assign(new Error("x"), { code: "ECONNRESET" })],
    ["not an error", "Connection terminated unexpectedly"],
    [
      "an RPC's fetch that could not connect",
      Object.assign(new Error("HTTP request failed"), {
        cause: new TypeError("fetch failed", {
          cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8545"), { code: "ECONNREFUSED", syscall: "connect" }),
        }),
      }),
    ],
  ])("not %s", (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
