import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, createWalletClient, domainSeparator, http, maxUint256, parseAbi, parseSignature, toHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import {
  ANVIL_DEV_ACCOUNTS,
  BASE_CHAIN_ID,
  BASE_USDC_ADDRESS,
  MULTICALL3_ADDRESS,
  USDC_EIP712_DOMAIN,
  getDevAccount,
  type DevAccount,
} from "@/lib/chain/constants";
import { generateDevKeys } from "@/lib/chain/dev-keys";
import { transferWithAuthorizationTypes, usdcAbi } from "@/lib/chain/usdc-abi";
import { DEV_ACCOUNT_USDC_BALANCE, startLocalChain, type LocalChain } from "@/scripts/local-chain";

/** This file's own treasury and relayer, as a dev install's are generated (never anvil's public accounts). */
const platform = generateDevKeys();
const platformAccounts = { treasury: platform.treasury.address, relayer: platform.relayer.address };
let chain: LocalChain;
let publicClient: ReturnType<typeof createBaseClient>;

function createBaseClient(rpcUrl: string) {
  return createPublicClient({ chain: base, transport: http(rpcUrl), pollingInterval: 20 });
}

beforeAll(async () => {
  chain = await startLocalChain({ platform: platformAccounts });
  publicClient = createBaseClient(chain.rpcUrl);
});

afterAll(async () => {
  await chain?.stop();
});

function createRelayerClient() {
  return createWalletClient({
    account: privateKeyToAccount(platform.relayer.privateKey),
    chain: base,
    transport: http(chain.rpcUrl),
  });
}

function readUsdcBalance(address: DevAccount["address"]) {
  return publicClient.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: "balanceOf", args: [address] });
}

async function signTransferAuthorization(signer: DevAccount, to: DevAccount["address"], value: bigint) {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: signer.address,
    to,
    value,
    validAfter: now - 60n,
    validBefore: now + 600n,
    nonce: toHex(crypto.getRandomValues(new Uint8Array(32))),
  };
  const signature = await privateKeyToAccount(signer.privateKey).signTypedData({
    domain: USDC_EIP712_DOMAIN,
    types: transferWithAuthorizationTypes,
    primaryType: "TransferWithAuthorization",
    message,
  });
  return { message, signature };
}

function toAuthorizationArgs(message: Awaited<ReturnType<typeof signTransferAuthorization>>["message"]) {
  return [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce] as const;
}

describe("local chain", () => {
  it("runs as Base (chain id 8453) with anvil's default dev accounts", async () => {
    expect(await publicClient.getChainId()).toBe(BASE_CHAIN_ID);
    const accounts = await createWalletClient({ transport: http(chain.rpcUrl) }).getAddresses();
    expect(accounts.map((a) => a.toLowerCase())).toEqual(ANVIL_DEV_ACCOUNTS.map((a) => a.address.toLowerCase()));
    for (const account of ANVIL_DEV_ACCOUNTS) {
      expect(privateKeyToAccount(account.privateKey).address).toBe(account.address);
    }
  });

  it("serves USDC at the Base address with mainnet metadata and EIP-712 domain", async () => {
    const read = (functionName: "name" | "symbol" | "decimals" | "version") =>
      publicClient.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName });
    expect(await read("name")).toBe("USD Coin");
    expect(await read("symbol")).toBe("USDC");
    expect(await read("decimals")).toBe(6);
    expect(await read("version")).toBe("2");

    const onChainSeparator = await publicClient.readContract({
      address: BASE_USDC_ADDRESS,
      abi: parseAbi(["function DOMAIN_SEPARATOR() view returns (bytes32)"]),
      functionName: "DOMAIN_SEPARATOR",
    });
    expect(onChainSeparator).toBe(domainSeparator({ domain: USDC_EIP712_DOMAIN }));
  });

  it("funds every dev account with 1,000,000 USDC", async () => {
    expect(DEV_ACCOUNT_USDC_BALANCE).toBe(1_000_000_000_000n);
    for (const { address } of ANVIL_DEV_ACCOUNTS) {
      expect(await readUsdcBalance(address)).toBe(DEV_ACCOUNT_USDC_BALANCE);
    }
  });

  it("funds the platform's own accounts: gas for both, test USDC in the treasury", async () => {
    expect(await readUsdcBalance(platform.treasury.address)).toBe(DEV_ACCOUNT_USDC_BALANCE);
    for (const address of [platform.treasury.address, platform.relayer.address])
      expect(await publicClient.getBalance({ address })).toBeGreaterThan(10n ** 18n);
  });

  it("settles a relayed EIP-3009 transferWithAuthorization exactly once", async () => {
    const buyer = getDevAccount("demoBuyer");
    const treasury = platform.treasury;
    const relayer = createRelayerClient();
    const amount = 1_234_567n;
    const [buyerBefore, treasuryBefore] = [await readUsdcBalance(buyer.address), await readUsdcBalance(treasury.address)];

    const { message, signature } = await signTransferAuthorization(buyer, treasury.address, amount);
    const { v, r, s } = parseSignature(signature);
    const hash = await relayer.writeContract({
      address: BASE_USDC_ADDRESS,
      abi: usdcAbi,
      functionName: "transferWithAuthorization",
      args: [...toAuthorizationArgs(message), Number(v), r, s],
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });

    expect(receipt.status).toBe("success");
    expect(receipt.from.toLowerCase()).toBe(platform.relayer.address.toLowerCase());
    expect(await readUsdcBalance(buyer.address)).toBe(buyerBefore - amount);
    expect(await readUsdcBalance(treasury.address)).toBe(treasuryBefore + amount);
    expect(
      await publicClient.readContract({
        address: BASE_USDC_ADDRESS,
        abi: usdcAbi,
        functionName: "authorizationState",
        args: [buyer.address, message.nonce],
      }),
    ).toBe(true);

    await expect(
      relayer.writeContract({
        address: BASE_USDC_ADDRESS,
        abi: usdcAbi,
        functionName: "transferWithAuthorization",
        args: [...toAuthorizationArgs(message), signature],
      }),
    ).rejects.toThrow(/authorization is used or canceled/);
  });

  it("accepts the bytes-signature overload of transferWithAuthorization", async () => {
    const payer = ANVIL_DEV_ACCOUNTS[4];
    const payee = ANVIL_DEV_ACCOUNTS[5];
    const before = await readUsdcBalance(payee.address);
    const { message, signature } = await signTransferAuthorization(payer, payee.address, 42n);

    const hash = await createRelayerClient().writeContract({
      address: BASE_USDC_ADDRESS,
      abi: usdcAbi,
      functionName: "transferWithAuthorization",
      args: [...toAuthorizationArgs(message), signature as Hex],
    });

    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
    expect(await readUsdcBalance(payee.address)).toBe(before + 42n);
  });

  it("has Multicall3 at its canonical address", async () => {
    expect(await publicClient.getCode({ address: MULTICALL3_ADDRESS })).toMatch(/^0x[0-9a-f]{100,}$/);
    const [name, balance] = await publicClient.multicall({
      allowFailure: false,
      contracts: [
        { address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: "name" },
        { address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: "balanceOf", args: [getDevAccount("demoSupplier").address] },
      ],
    });
    expect(name).toBe("USD Coin");
    expect(balance).toBe(DEV_ACCOUNT_USDC_BALANCE);
  });

  it("lets the relayer pay suppliers from the treasury via transferFrom", async () => {
    const treasury = platform.treasury.address;
    const supplier = getDevAccount("demoSupplier").address;
    const relayerAddress = platform.relayer.address;
    expect(
      await publicClient.readContract({
        address: BASE_USDC_ADDRESS,
        abi: usdcAbi,
        functionName: "allowance",
        args: [treasury, relayerAddress],
      }),
    ).toBe(maxUint256);

    const supplierBefore = await readUsdcBalance(supplier);
    const hash = await createRelayerClient().writeContract({
      address: BASE_USDC_ADDRESS,
      abi: usdcAbi,
      functionName: "transferFrom",
      args: [treasury, supplier, 500_000n],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
    expect(await readUsdcBalance(supplier)).toBe(supplierBefore + 500_000n);
  });

  it("refuses token calls from the dedicated proxy admin", async () => {
    await expect(
      publicClient.readContract({
        address: BASE_USDC_ADDRESS,
        abi: usdcAbi,
        functionName: "name",
        account: getDevAccount("proxyAdmin").address,
      }),
    ).rejects.toThrow(/Cannot call fallback function from the proxy admin/);
  });

  it("stops anvil and frees its port", async () => {
    const other = await startLocalChain({ platform: platformAccounts });
    const client = createPublicClient({ transport: http(other.rpcUrl, { retryCount: 0 }) });
    expect(await client.getChainId()).toBe(BASE_CHAIN_ID);
    await other.stop();
    await expect(client.getChainId()).rejects.toThrow();
  });
});
