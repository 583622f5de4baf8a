import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { ANVIL_DEV_ACCOUNTS } from "@/lib/chain/constants";
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
    const production = {
      SVC_ENV: "production",
      DATABASE_URL: "postgresql://db.internal/svc",
      SVC_ORIGIN: "https://svc.example",
      BASE_RPC_URL: "https://base.rpc.example/key",
    };
    expect(() => parseEnv(production)).toThrow(/RELAYER_PRIVATE_KEY: required in production/);
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

  it("refuses production on the localhost defaults of SVC_ORIGIN and BASE_RPC_URL, naming each", () => {
    const production = {
      SVC_ENV: "production",
      DATABASE_URL: "postgresql://db.internal/svc",
      RELAYER_PRIVATE_KEY: `0x${"11".repeat(32)}`,
      SECRET_KEY: "22".repeat(32),
      TREASURY_ADDRESS: `0x${"33".repeat(20)}`,
      METRICS_TOKEN: "m".repeat(32),
    };
    const message = (() => {
      try {
        parseEnv(production);
        return "";
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toMatch(/^ {2}SVC_ORIGIN: required in production \(the public origin/m);
    expect(message).toMatch(/^ {2}BASE_RPC_URL: required in production \(a Base mainnet RPC/m);
    expect(() => parseEnv({ ...production, SVC_ORIGIN: "https://svc.example" })).toThrow(/BASE_RPC_URL/);
    expect(() => parseEnv({ ...production, SVC_ORIGIN: "https://svc.example" })).not.toThrow(/SVC_ORIGIN/);
    // Outside production they keep their local-dev defaults.
    expect(parseEnv({}).BASE_RPC_URL).toBe("http://127.0.0.1:8545");
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
      "SVC_ORIGIN",
      "BASE_RPC_URL",
    ]) {
      expect(message).toContain(`  ${name}:`);
    }
  });

  it("takes PRIVATE_UPSTREAM_ALLOW in production, and names each entry it cannot use", () => {
    const production = {
      SVC_ENV: "production",
      DATABASE_URL: "postgresql://db.internal/svc",
      SVC_ORIGIN: "https://svc.example",
      BASE_RPC_URL: "https://base.rpc.example/key",
      RELAYER_PRIVATE_KEY: `0x${"11".repeat(32)}`,
      SECRET_KEY: "22".repeat(32),
      TREASURY_ADDRESS: `0x${"33".repeat(20)}`,
      METRICS_TOKEN: "m".repeat(32),
    };
    const allow = " 10.0.0.0/8, fd00::/8,10.1.2.3 ,VLLM.internal,*.gpu.internal";
    expect(parseEnv({ ...production, PRIVATE_UPSTREAM_ALLOW: allow }).PRIVATE_UPSTREAM_ALLOW).toEqual([
      "10.0.0.0/8",
      "fd00::/8",
      "10.1.2.3",
      "vllm.internal",
      "*.gpu.internal",
    ]);
    expect(parseEnv({}).PRIVATE_UPSTREAM_ALLOW).toEqual([]);
    let message = "";
    try {
      parseEnv({ PRIVATE_UPSTREAM_ALLOW: "0.0.0.0/0,10.0.0.0/33,no spaces,http://x" });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/"0\.0\.0\.0\/0" is too wide/);
    expect(message).toMatch(/"10\.0\.0\.0\/33" has a prefix length/);
    expect(message).toMatch(/"no spaces" is neither/);
    expect(message).toMatch(/"http:\/\/x" is not a valid address range/);
  });

  it("never takes one of anvil's public accounts as the relayer or the treasury, in any mode", () => {
    for (const SVC_ENV of ["development", "test", "production"]) {
      for (const account of [ANVIL_DEV_ACCOUNTS[0], ANVIL_DEV_ACCOUNTS[1], ANVIL_DEV_ACCOUNTS[9]]) {
        expect(() => parseEnv({ SVC_ENV, TREASURY_ADDRESS: account.address.toLowerCase() })).toThrow(
          /TREASURY_ADDRESS: is one of anvil's public dev accounts/,
        );
        expect(() => parseEnv({ SVC_ENV, RELAYER_PRIVATE_KEY: account.privateKey })).toThrow(
          /RELAYER_PRIVATE_KEY: is one of anvil's public dev accounts/,
        );
      }
    }
  });

  it("outside production, an unset relayer and treasury are this install's own pair, generated once into SVC_DEV_KEYS_FILE", () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "svc-env-keys-")), ".data", "dev-keys.json");
    const first = parseEnv({ SVC_DEV_KEYS_FILE: file });
    const treasury = first.TREASURY_ADDRESS;
    const relayer = privateKeyToAccount(first.RELAYER_PRIVATE_KEY as `0x${string}`).address;

    const onDisk = JSON.parse(readFileSync(file, "utf8")) as Record<"treasury" | "relayer", { address: string; privateKey: string }>;
    expect([onDisk.treasury.address, onDisk.relayer.address]).toEqual([treasury, relayer]);
    expect(statSync(file).mode & 0o077).toBe(0);
    for (const address of [treasury, relayer]) expect(ANVIL_DEV_ACCOUNTS.map((a) => a.address)).not.toContain(address);
    expect(treasury).not.toBe(relayer);

    // Read again (a restart, another process of the stack): the same pair; another install: another pair.
    const again = parseEnv({ SVC_ENV: "test", SVC_DEV_KEYS_FILE: file });
    expect([again.TREASURY_ADDRESS, again.RELAYER_PRIVATE_KEY]).toEqual([treasury, first.RELAYER_PRIVATE_KEY]);
    const other = parseEnv({ SVC_DEV_KEYS_FILE: path.join(path.dirname(file), "other.json") });
    expect(other.TREASURY_ADDRESS).not.toBe(treasury);

    // A value set explicitly wins, and nothing is read for it.
    const set = `0x${"33".repeat(20)}`;
    expect(parseEnv({ TREASURY_ADDRESS: set, SVC_DEV_KEYS_FILE: path.join(path.dirname(file), "never.json") }).TREASURY_ADDRESS).toBe(set);
  });

  it("refuses a keys file that names a public key, or an address that is not its key's", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "svc-env-keys-"));
    const write = (name: string, keys: unknown) => {
      const file = path.join(dir, name);
      writeFileSync(file, JSON.stringify(keys));
      return file;
    };
    const anvil = write("anvil.json", { treasury: ANVIL_DEV_ACCOUNTS[1], relayer: ANVIL_DEV_ACCOUNTS[0] });
    expect(() => parseEnv({ SVC_DEV_KEYS_FILE: anvil }).TREASURY_ADDRESS).toThrow(/treasury is one of anvil's public dev accounts/);
    const key = `0x${"42".repeat(32)}` as const;
    const mismatched = write("mismatched.json", {
      treasury: { address: ANVIL_DEV_ACCOUNTS[5].address, privateKey: key },
      relayer: { address: privateKeyToAccount(key).address, privateKey: key },
    });
    expect(() => parseEnv({ SVC_DEV_KEYS_FILE: mismatched }).TREASURY_ADDRESS).toThrow(
      /treasury.address is not the address of treasury.privateKey/,
    );
  });
});
