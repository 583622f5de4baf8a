"use client";

import { useState } from "react";
import { formatDiem, formatDiemCents, formatUsd, formatUsdCents } from "@/components/ui/format";

/**
 * A balance or total at cents with its exact value a hover or a tap away (policy 1 in format.ts): the title shows it
 * on hover, a tap or Enter swaps the figure for the exact one (and back), and screen readers hear both. When the
 * rounded figure is already exact it is plain text. Never for money about to move: that is `formatUsd`, exact.
 */
export function Amount({ value, unit = "usd" }: { value: string | bigint; unit?: "usd" | "diem" }) {
  const [exactShown, setExactShown] = useState(false);
  const exact = unit === "usd" ? formatUsd(value) : formatDiem(value);
  const rounded = unit === "usd" ? formatUsdCents(value) : formatDiemCents(value);
  if (rounded === exact) return <span className="whitespace-nowrap">{exact}</span>;
  return (
    <button
      type="button"
      title={`Exactly ${exact}`}
      aria-pressed={exactShown}
      onClick={() => setExactShown((shown) => !shown)}
      className="cursor-help rounded-sm whitespace-nowrap underline decoration-zinc-400 decoration-dotted decoration-1 underline-offset-4 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-emerald-600"
      data-exact={exact}
    >
      {exactShown ? exact : rounded}
      {!exactShown && <span className="sr-only">, exactly {exact}</span>}
    </button>
  );
}
