import { describe, expect, it } from "vitest";
import { allowedClaim, minCountAccepting, USAGE_TOLERANCE_FLOOR_TOKENS } from "@/lib/router/metering";

describe("the usage tolerance", () => {
  it("is proportional (nothing over 0, at most twice a short count, 25% over a long one), and counting stops where it accepts", () => {
    expect([0, 1, 8, 15, 16, 40, 64, 65, 1_000, 100_000].map(allowedClaim)).toEqual([0, 2, 16, 30, 32, 56, 80, 82, 1_250, 125_000]);
    for (let ours = 1; ours < 5_000; ours++) {
      expect(allowedClaim(ours)).toBeLessThanOrEqual(2 * ours);
      expect(allowedClaim(ours)).toBeGreaterThanOrEqual(ours + Math.min(ours, USAGE_TOLERANCE_FLOOR_TOKENS));
    }

    // Counting a reply stops at the least count whose tolerance accepts the claim, for any claim a supplier can send.
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const claims = [0, 1, 2, 3, 31, 32, 33, 80, 81, 2_147_483_648, Number.MAX_SAFE_INTEGER];
    for (let i = 0; i < 2_000; i++) claims.push(Math.floor(random() ** 4 * 1_000_000));
    for (const claim of claims) {
      const n = minCountAccepting(claim);
      expect(allowedClaim(n)).toBeGreaterThanOrEqual(claim);
      if (n > 0) expect(allowedClaim(n - 1)).toBeLessThan(claim);
    }
  });
});
