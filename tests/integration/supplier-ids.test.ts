/**
 * A buyer names suppliers by public id (provider.only, provider.ignore): checked against the process's set of them
 * (lib/supply/public-id.ts), not by hashing every supplier in the database on each request.
 */
import { describe, expect, it } from "vitest";
import { isSupplierPublicId, supplierPublicId } from "@/lib/supply/public-id";
import { seedAccount } from "../helpers/factories";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";

describe("supplier public ids", () => {
  it("knows a supplier once it has an offer, including one posted a moment after the last read", async () => {
    const model = await seedPrivateModel();
    const first = await seedOffer({ models: [{ id: model.id, upstreamModel: "x" }], priceCents: 90, dailyCapacityMicroDiem: 1_000_000n });
    expect(await isSupplierPublicId(supplierPublicId(first.supplierId))).toBe(true);
    // A second supplier posts right after that read: its id is not in the set yet, and the check waits for a new read.
    const second = await seedOffer({ models: [{ id: model.id, upstreamModel: "x" }], priceCents: 90, dailyCapacityMicroDiem: 1_000_000n });
    expect(await isSupplierPublicId(supplierPublicId(second.supplierId))).toBe(true);
    // An account without offers is no supplier, and a made-up id none.
    const buyer = await seedAccount();
    const [withoutOffers, madeUp] = await Promise.all([
      isSupplierPublicId(supplierPublicId(buyer.id)),
      isSupplierPublicId(`sup_${"0".repeat(24)}`),
    ]);
    expect([withoutOffers, madeUp]).toEqual([false, false]);
  });
});
