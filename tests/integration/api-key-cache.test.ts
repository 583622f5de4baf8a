import { describe, expect, it } from "vitest";
import { sha256Hex } from "@/lib/auth/tokens";
import { db } from "@/lib/db/client";
import { moduleCopy } from "../helpers/module-copy";
import { seedBuyer } from "../helpers/router-factories";

/**
 * The completion path's key cache (getApiKeyForCompletion). The production process loads every lib module twice (the
 * front door's host serves completions, Next's server bundle every other route): each test loads its own copies.
 */
const keyAuthCopy = () => moduleCopy(() => import("@/lib/auth/api-key-auth"));

describe("the completion path's key cache", () => {
  it("is one per process: a key that either module graph finds refused is read again by the other", async () => {
    const frontDoor = await keyAuthCopy();
    const nextBundle = await keyAuthCopy();
    const buyer = await seedBuyer(0n);
    expect((await frontDoor.getApiKeyForCompletion(buyer.key)).apiKeyId).toBe(buyer.apiKeyId); // now cached as live
    await db.apiKey.update({ where: { id: buyer.apiKeyId }, data: { revokedAt: new Date() } });

    // Next's copy finds the key revoked (GET /v1/key, the early 402 path) and drops it: from the front door's cache too.
    await expect(nextBundle.assertApiKeyLive(sha256Hex(buyer.key))).rejects.toMatchObject({ code: "invalid_api_key" });
    await expect(frontDoor.getApiKeyForCompletion(buyer.key)).rejects.toMatchObject({ code: "invalid_api_key" });
  });

  it("trusts a key it read live for a minute at most: a revocation nothing reported is seen when the minute is up", async () => {
    const keys = await keyAuthCopy();
    const buyer = await seedBuyer(0n);
    const readAt = new Date();
    await keys.getApiKeyForCompletion(buyer.key, readAt);
    await db.apiKey.update({ where: { id: buyer.apiKeyId }, data: { revokedAt: new Date() } });
    await expect(keys.getApiKeyForCompletion(buyer.key, new Date(readAt.getTime() + 60_000))).rejects.toMatchObject({
      code: "invalid_api_key",
    });
  });
});
