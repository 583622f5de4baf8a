import { describe, expect, it } from "vitest";
import { parseEnv } from "@/lib/env";

describe("configuration", () => {
  it("has local-dev defaults for everything", () => {
    const env = parseEnv({});
    expect(env.PLATFORM_FEE_BPS).toBe(1000);
    expect(env.DEFAULT_MAX_PRICE_CENTS).toBe(100);
    expect(env.USDC_ADDRESS).toBe("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913");
    expect(env.SVC_ORIGIN).toBe("http://localhost:3000");
    expect(env.ALLOW_PRIVATE_UPSTREAMS).toBe(false);
  });

  it("probes every 6 h within 5 USDC a day and delists what they flag, unless told otherwise", () => {
    const env = parseEnv({});
    expect([env.PROBE_INTERVAL_MS, env.PROBE_DAILY_BUDGET_MICROS, env.PROBE_DELIST_FLAGGED]).toEqual([21_600_000, 5_000_000, true]);
    expect(parseEnv({ PROBE_DELIST_FLAGGED: "false" }).PROBE_DELIST_FLAGGED).toBe(false);
    expect(parseEnv({ PROBE_DELIST_FLAGGED: "0" }).PROBE_DELIST_FLAGGED).toBe(false);
    expect(parseEnv({ PROBE_INTERVAL_MS: "0" }).PROBE_INTERVAL_MS).toBe(0);
    expect(() => parseEnv({ PROBE_DELIST_FLAGGED: "no" })).toThrow(/PROBE_DELIST_FLAGGED/);
  });

  it("lists every bad variable in one error", () => {
    const bad = { PLATFORM_FEE_BPS: "ten", TREASURY_ADDRESS: "0x12", SVC_ORIGIN: "nope" };
    expect(() => parseEnv(bad)).toThrow(/^Invalid environment configuration/);
    const message = (() => {
      try {
        parseEnv(bad);
        return "";
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const name of Object.keys(bad)) expect(message).toContain(`${name}:`);
  });

  it("refuses production with the public dev keys or without a database", () => {
    const production = { SVC_ENV: "production", DATABASE_URL: "postgresql://db.internal/svc", SVC_ORIGIN: "https://svc.example" };
    expect(() => parseEnv(production)).toThrow(/RELAYER_PRIVATE_KEY: must be set in production/);
    const keys = {
      RELAYER_PRIVATE_KEY: `0x${"11".repeat(32)}`,
      SECRET_KEY: "22".repeat(32),
      TREASURY_ADDRESS: `0x${"33".repeat(20)}`,
      METRICS_TOKEN: "m".repeat(32),
    };
    expect(parseEnv({ ...production, ...keys }).SVC_ENV).toBe("production");
    expect(() => parseEnv({ ...production, ...keys, DATABASE_URL: undefined })).toThrow(/DATABASE_URL/);
    expect(() => parseEnv({ ...production, ...keys, ALLOW_PRIVATE_UPSTREAMS: "true" })).toThrow(/ALLOW_PRIVATE_UPSTREAMS/);
  });

  it("lists every missing secret and dev key of a production deployment in one error", () => {
    let message = "";
    try {
      parseEnv({ SVC_ENV: "production", ALLOW_PRIVATE_UPSTREAMS: "true" });
    } catch (error) {
      message = (error as Error).message;
    }
    for (const name of [
      "RELAYER_PRIVATE_KEY",
      "SECRET_KEY",
      "TREASURY_ADDRESS",
      "DATABASE_URL",
      "METRICS_TOKEN",
      "ALLOW_PRIVATE_UPSTREAMS",
    ]) {
      expect(message).toContain(`  ${name}:`);
    }
  });
});
