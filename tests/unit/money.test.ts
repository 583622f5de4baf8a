import { describe, expect, it } from "vitest";
import { burnMicroDiem, ceilDiv, chargeMicros, formatMicros, parseMicros, splitCharge, usdPerToken } from "@/lib/money";

describe("decimal amounts", () => {
  it.each([
    ["10", 10_000_000n],
    ["10.00", 10_000_000n],
    ["2.01", 2_010_000n],
    ["0.000001", 1n],
    ["123456.789012", 123_456_789_012n],
  ])("parses %s exactly", (input, micros) => {
    expect(parseMicros(input)).toBe(micros);
  });

  it.each(["", "-1", "+1", "1e3", "1.0000001", ".5", "5.", "1,5", " 1", "NaN", "Infinity", "0x10"])("rejects %j", (input) => {
    expect(parseMicros(input)).toBeNull();
  });

  it("formats with six places and round-trips", () => {
    expect(formatMicros(12_500_000n)).toBe("12.500000");
    expect(formatMicros(1n)).toBe("0.000001");
    expect(formatMicros(-1_500_000n)).toBe("-1.500000");
    expect(parseMicros(formatMicros(987_654_321n))).toBe(987_654_321n);
  });
});

describe("pricing arithmetic", () => {
  it("meters burn at list price, rounding up to the next micro-diem", () => {
    // 1000 prompt tokens at 0.7 diem/1M + 500 completion tokens at 2.8 diem/1M = 0.0007 + 0.0014 diem
    expect(burnMicroDiem(1000, 500, { inputMicroDiemPerMTok: 700_000n, outputMicroDiemPerMTok: 2_800_000n })).toBe(2100n);
    expect(burnMicroDiem(1, 0, { inputMicroDiemPerMTok: 700_000n, outputMicroDiemPerMTok: 0n })).toBe(1n);
  });

  it("charges ceil(burn x cents / 100) micro-USDC", () => {
    expect(chargeMicros(1_000_000n, 100)).toBe(1_000_000n);
    expect(chargeMicros(2100n, 85)).toBe(1785n);
    expect(chargeMicros(3n, 33)).toBe(1n);
    expect(ceilDiv(0n, 7n)).toBe(0n);
  });

  it("splits every charge so supplier + fee = charge, for awkward amounts too", () => {
    for (const charge of [0n, 1n, 7n, 9n, 10n, 11n, 999_999n, 1_234_567n]) {
      const { supplierMicros, feeMicros } = splitCharge(charge, 1000);
      expect(supplierMicros + feeMicros).toBe(charge);
      expect(supplierMicros).toBe((charge * 90n) / 100n);
    }
  });
});

describe("usdPerToken (OpenRouter's pricing.prompt and .completion)", () => {
  it("is the charge of 1M tokens, per token, exactly, without trailing zeros", () => {
    expect(usdPerToken(800_000n, 100)).toBe("0.0000008");
    expect(usdPerToken(700_000n, 85)).toBe("0.000000595");
    expect(usdPerToken(0n, 100)).toBe("0");
    expect(usdPerToken(2_000_000_000n, 10_000)).toBe("0.2");
    // The charge rule rounds up to the micro-USDC per 1M tokens: a price never reads below what is charged.
    expect(usdPerToken(1n, 1)).toBe("0.000000000001");
    expect(usdPerToken(1_000_001n, 50)).toBe("0.000000500001");
  });
});
