import { describe, expect, it } from "vitest";
import {
  decimalsNeeded,
  diemColumn,
  formatDiem,
  formatDiemCents,
  formatMs,
  formatPercent,
  formatPricePerDiem,
  formatUsd,
  formatUsdCents,
  NBSP,
  percentColumn,
  usdColumn,
} from "@/components/ui/format";

describe("the number policy (components/ui/format.ts)", () => {
  it("shows a balance at cents, rounded toward zero, and a sliver under a cent as <$0.01", () => {
    expect(formatUsdCents("65.247062")).toBe("$65.24");
    expect(formatUsdCents("1.999999")).toBe("$1.99");
    expect(formatUsdCents("1234567.5")).toBe("$1,234,567.50");
    expect(formatUsdCents("0")).toBe("$0.00");
    expect(formatUsdCents("0.000001")).toBe("<$0.01");
    expect(formatUsdCents("0.01")).toBe("$0.01");
    expect(formatUsdCents(-2_500_000n)).toBe("-$2.50");
  });

  it("keeps money about to move exact, every digit it has", () => {
    expect(formatUsd("1.234567")).toBe("$1.234567");
    expect(formatUsd("2")).toBe("$2.00");
    expect(formatUsd("0.00027")).toBe("$0.00027");
    expect(formatUsd("65.247062")).toBe("$65.247062");
  });

  it("gives a column of dollars one number of decimals, the most any value needs, rounding none", () => {
    const cell = usdColumn(["0.001119", "0.00081", "0.5"]);
    expect(cell("0.001119")).toBe("$0.001119");
    expect(cell("0.00081")).toBe("$0.000810");
    expect(cell("0.5")).toBe("$0.500000");
    const cents = usdColumn(["1.5", "20"]);
    expect(cents("1.5")).toBe("$1.50");
    expect(cents("20")).toBe("$20.00");
    expect(usdColumn([])("3")).toBe("$3.00");
  });

  it("gives a column of diem and of percentages one number of decimals", () => {
    const diem = diemColumn(["50", "12.5", "0.25"]);
    expect(diem("50")).toBe(`50.00${NBSP}diem`);
    expect(diem("12.5")).toBe(`12.50${NBSP}diem`);
    const pct = percentColumn([0.38, 0.343]);
    expect(pct(0.38)).toBe("38.0%");
    expect(pct(0.343)).toBe("34.3%");
    expect(percentColumn([0.5, 0.25])(0.5)).toBe("50%");
    expect(percentColumn([0.5, 0.004])(0.5)).toBe("50.00%");
    expect(formatPercent(0.0042)).toBe("0.42%");
  });

  it("never lets a unit wrap away from its number", () => {
    expect(formatDiem("374.993664")).toBe(`374.993664${NBSP}diem`);
    expect(formatDiemCents("374.993664")).toBe(`374.99${NBSP}diem`);
    expect(formatDiemCents("0.000001")).toBe(`<0.01${NBSP}diem`);
    expect(formatPricePerDiem(80)).toBe(`80¢${NBSP}/${NBSP}diem`);
    expect(formatMs(1234)).toBe(`1,234${NBSP}ms`);
    for (const text of [formatDiem("1"), formatPricePerDiem(5), formatMs(3)]) expect(text).not.toMatch(/ /);
  });

  it("counts the decimals an amount needs", () => {
    expect(decimalsNeeded(0n)).toBe(0);
    expect(decimalsNeeded(1_500_000n)).toBe(1);
    expect(decimalsNeeded(810n)).toBe(5);
    expect(decimalsNeeded(-1n)).toBe(6);
  });
});
