import { beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { db } from "@/lib/db/client";
import { readError } from "../helpers/http";
import { buildSiweMessage, fetchChallenge, verify } from "../helpers/siwe";
import { chainClient, deployWalletFactory, randomSalt } from "../helpers/smart-wallets";

let factory: Awaited<ReturnType<typeof deployWalletFactory>>;

beforeAll(async () => {
  factory = await deployWalletFactory();
});

describe("POST /auth/verify with smart-contract wallets", () => {
  it("signs in a deployed EIP-1271 wallet with its owner's signature", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = await factory.deployWallet(owner.address, randomSalt());
    expect(await chainClient.getCode({ address: wallet })).toMatch(/^0x[0-9a-f]{10,}/);

    const message = buildSiweMessage(await fetchChallenge(wallet), wallet);
    const res = await verify({ message, signature: await owner.signMessage({ message }) });

    expect(res.status).toBe(200);
    expect((await res.json()).address).toBe(wallet);
    const account = await db.account.findUniqueOrThrow({ where: { walletAddress: wallet } });
    expect(await db.session.count({ where: { accountId: account.id } })).toBe(1);
  });

  it("refuses a deployed wallet's message signed by someone other than its owner", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey());
    const wallet = await factory.deployWallet(owner.address, randomSalt());

    const message = buildSiweMessage(await fetchChallenge(wallet), wallet);
    const res = await verify({ message, signature: await stranger.signMessage({ message }) });

    expect(res.status).toBe(401);
    expect((await readError(res)).code).toBe("invalid_signature");
    expect(await db.account.count({ where: { walletAddress: wallet } })).toBe(0);
  });

  it("signs in an undeployed (counterfactual) wallet through an EIP-6492 signature, without deploying it", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const salt = randomSalt();
    const wallet = await factory.walletAddress(owner.address, salt);
    expect(await chainClient.getCode({ address: wallet })).toBeUndefined();

    const message = buildSiweMessage(await fetchChallenge(wallet), wallet);
    const res = await verify({ message, signature: await factory.signCounterfactually(owner, { owner: owner.address, salt }, message) });

    expect(res.status).toBe(200);
    expect((await res.json()).address).toBe(wallet);
    // Verification simulates the deployment in an eth_call; nothing reaches the chain.
    expect(await chainClient.getCode({ address: wallet })).toBeUndefined();
  });

  it("refuses an EIP-6492 signature whose inner signature is not the owner's", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey());
    const salt = randomSalt();
    const wallet = await factory.walletAddress(owner.address, salt);

    const message = buildSiweMessage(await fetchChallenge(wallet), wallet);
    const forged = await factory.signCounterfactually(stranger, { owner: owner.address, salt }, message);
    const res = await verify({ message, signature: forged });

    expect(res.status).toBe(401);
    expect((await readError(res)).code).toBe("invalid_signature");
  });
});
