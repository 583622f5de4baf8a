/** Where the CLI talks to, which wallet signs, and where it keeps its session: flags, then env, then local-dev defaults. */
import { readFileSync } from "node:fs";
import type { Hex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { ANVIL_DEV_ACCOUNTS } from "../../lib/chain/constants";
import { CliError, EXIT } from "./errors";

export const DEFAULT_BASE_URL = "http://localhost:3000";
export const DEFAULT_SESSION_FILE = ".svc-agent/session.json";
const LOCAL_RPC_URL = "http://127.0.0.1:8545";
const BASE_MAINNET_RPC_URL = "https://mainnet.base.org";

export type Flags = {
  "base-url"?: string;
  "key-file"?: string;
  "rpc-url"?: string;
  "session-file"?: string;
  json?: boolean;
};

export type Config = {
  baseUrl: string;
  /**
   * Loopback base URL, taken for a dev deployment on the local chain: the dev key may be used, only the chain's funded
   * dev accounts pay (lib/chain/dev-wallet.ts), and the SIWE domain may be another loopback host.
   */
  isLocal: boolean;
  rpcUrl: string;
  sessionFile: string;
  json: boolean;
  keyFile?: string;
};

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

export function resolveConfig(flags: Flags, env: NodeJS.ProcessEnv): Config {
  const raw = flags["base-url"] ?? env.SVC_BASE_URL ?? DEFAULT_BASE_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`--base-url ${JSON.stringify(raw)} is not a URL (e.g. http://localhost:3000).`, EXIT.usage, "invalid_base_url");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new CliError(`--base-url must be http(s), got ${url.protocol}`, EXIT.usage, "invalid_base_url");
  }
  const isLocal = isLoopbackHost(url.hostname);
  if (!isLocal && url.protocol !== "https:") {
    throw new CliError(
      `Refusing plain http to ${url.host}: the session cookie and API keys would travel in clear. Use https.`,
      EXIT.usage,
      "insecure_base_url",
    );
  }
  return {
    baseUrl: url.origin,
    isLocal,
    rpcUrl: flags["rpc-url"] ?? env.SVC_RPC_URL ?? (isLocal ? LOCAL_RPC_URL : BASE_MAINNET_RPC_URL),
    sessionFile: flags["session-file"] ?? env.SVC_AGENT_SESSION_FILE ?? DEFAULT_SESSION_FILE,
    json: flags.json === true,
    keyFile: flags["key-file"],
  };
}

export type Signer = { account: PrivateKeyAccount; source: string };

/**
 * The wallet that signs in and pays: --key-file, else SVC_AGENT_PRIVATE_KEY, else (only for a loopback base URL)
 * the demo buyer that `npm run dev` funds. The dev key is public knowledge, so it is refused for anything else.
 */
export function resolveSigner(config: Config, env: NodeJS.ProcessEnv): Signer {
  if (config.keyFile) {
    let text: string;
    try {
      text = readFileSync(config.keyFile, "utf8");
    } catch (error) {
      throw new CliError(`Cannot read --key-file ${config.keyFile}: ${(error as Error).message}`, EXIT.usage, "key_file_unreadable");
    }
    return { account: parsePrivateKey(text, `--key-file ${config.keyFile}`), source: `key file ${config.keyFile}` };
  }
  if (env.SVC_AGENT_PRIVATE_KEY)
    return { account: parsePrivateKey(env.SVC_AGENT_PRIVATE_KEY, "SVC_AGENT_PRIVATE_KEY"), source: "SVC_AGENT_PRIVATE_KEY" };
  if (!config.isLocal) {
    throw new CliError(
      `No wallet key: set SVC_AGENT_PRIVATE_KEY or pass --key-file <file>. (The public dev key is only used with a localhost base URL, not ${config.baseUrl}.)`,
      EXIT.usage,
      "no_wallet_key",
    );
  }
  // anvil's first dev key: every anvil user knows it, and `npm run dev` funds it with test USDC.
  const dev = ANVIL_DEV_ACCOUNTS[0];
  return { account: privateKeyToAccount(dev.privateKey), source: "anvil's first dev key (a public test key)" };
}

function parsePrivateKey(text: string, where: string): PrivateKeyAccount {
  const trimmed = text.trim();
  const hex = (trimmed.startsWith("0x") ? trimmed : `0x${trimmed}`) as Hex;
  if (!/^0x[0-9a-fA-F]{64}$/.test(hex)) throw new CliError(`${where} is not a 32-byte hex private key.`, EXIT.usage, "invalid_wallet_key");
  return privateKeyToAccount(hex);
}
