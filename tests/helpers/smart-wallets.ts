/**
 * Smart-contract wallets on the local chain: the EIP-1271 OwnerWallet and its CREATE2 factory from
 * tests/fixtures/contracts, compiled with solc in-process and deployed by an account of their own.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  http,
  serializeErc6492Signature,
  toHex,
  type Abi,
  type Address,
  type Hex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { base } from "viem/chains";
import { env } from "@/lib/env";

const CONTRACTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/contracts");
const SOURCES = ["OwnerWallet.sol", "OwnerWalletFactory.sol"];
// A deployer no other test file knows, funded for gas when the factory is deployed: the dev accounts are shared
// between files running in parallel (6 was also reconcile.test.ts's funder), and two senders on one account race
// for its nonces ("nonce too low").
const DEPLOYER = privateKeyToAccount(generatePrivateKey());

type Compiled = { abi: Abi; bytecode: Hex };

export function compileWalletContracts(): Record<"OwnerWallet" | "OwnerWalletFactory", Compiled> {
  const input = {
    language: "Solidity",
    sources: Object.fromEntries(SOURCES.map((file) => [file, { content: readFileSync(path.join(CONTRACTS_DIR, file), "utf8") }])),
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "cancun",
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  const pick = (file: string, name: string): Compiled => {
    const contract = output.contracts[file][name];
    return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  };
  return {
    OwnerWallet: pick("OwnerWallet.sol", "OwnerWallet"),
    OwnerWalletFactory: pick("OwnerWalletFactory.sol", "OwnerWalletFactory"),
  };
}

export const chainClient = createPublicClient({ chain: base, transport: http(env.BASE_RPC_URL), pollingInterval: 20 });
const deployerClient = createWalletClient({ chain: base, transport: http(env.BASE_RPC_URL), account: DEPLOYER });

/** Deploys the factory; returns helpers to deploy wallets or to sign for them before they exist. */
export async function deployWalletFactory() {
  const { OwnerWalletFactory: factoryArtifact } = compileWalletContracts();
  await createTestClient({ mode: "anvil", chain: base, transport: http(env.BASE_RPC_URL) }).setBalance({
    address: DEPLOYER.address,
    value: 10n ** 20n,
  });
  const hash = await deployerClient.deployContract({ abi: factoryArtifact.abi, bytecode: factoryArtifact.bytecode });
  const receipt = await chainClient.waitForTransactionReceipt({ hash });
  const factory = receipt.contractAddress as Address;
  const abi = factoryArtifact.abi;

  const walletAddress = (owner: Address, salt: Hex) =>
    chainClient.readContract({ address: factory, abi, functionName: "walletAddress", args: [owner, salt] }) as Promise<Address>;

  const deployCalldata = (owner: Address, salt: Hex) => encodeFunctionData({ abi, functionName: "deploy", args: [owner, salt] });

  return {
    factory,
    walletAddress,
    /** Deploys an OwnerWallet on chain (the EIP-1271 case). */
    async deployWallet(owner: Address, salt: Hex): Promise<Address> {
      const tx = await deployerClient.sendTransaction({ to: factory, data: deployCalldata(owner, salt) });
      await chainClient.waitForTransactionReceipt({ hash: tx });
      return walletAddress(owner, salt);
    },
    /** A signature wrapped for the undeployed wallet of (owner, salt) (EIP-6492): "deploy me with this call, then ask me". */
    async signCounterfactually(signer: PrivateKeyAccount, wallet: { owner: Address; salt: Hex }, message: string): Promise<Hex> {
      const signature = await signer.signMessage({ message });
      return serializeErc6492Signature({ address: factory, data: deployCalldata(wallet.owner, wallet.salt), signature });
    },
  };
}

export function randomSalt(): Hex {
  return toHex(randomBytes(32));
}
