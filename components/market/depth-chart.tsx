"use client";

import { useState } from "react";
import type { BookView } from "@/components/market/queries";
import { useWidth } from "@/components/market/use-width";
import { niceStep } from "@/components/ui/chart-scale";
import { formatCents, formatDiem, microsOf } from "@/components/ui/format";
import { PointerHint } from "@/components/ui/pointer-hint";

const HEIGHT = 240;
const PAD = { top: 16, right: 16, bottom: 28, left: 52 };

/**
 * Cumulative capacity (diem left today) against price (cents per diem): what a buyer with a given max
 * price can be routed to. A step rises at each price level; the dashed line marks the list price.
 */
export function DepthChart({ book }: { book: BookView }) {
  const [ref, width] = useWidth<HTMLDivElement>(640);
  const levels = book.levels.map((l) => ({ price: l.price_cents, diem: Number(l.remaining_diem), micros: microsOf(l.remaining_diem) }));
  let cumulative = 0;
  let cumulativeMicros = 0n;
  // Floats place the line; the words say the exact micro-diem (a float sum drifts in the sixth place).
  const steps = levels.map((l) => ({ price: l.price, total: (cumulative += l.diem), totalMicros: (cumulativeMicros += l.micros) }));
  const total = cumulative;
  // Scaled to the book: the x axis spans the book's own prices with a margin (not 0¢ upwards, which left the
  // book squeezed into the right of the chart); the list price shows only when it falls inside.
  const prices = levels.map((l) => l.price);
  const lo = prices.length ? Math.min(...prices) : 80;
  const hi = prices.length ? Math.max(...prices) : 120;
  const margin = Math.max(5, Math.round((hi - lo) * 0.15));
  const minPrice = Math.max(0, lo - margin);
  const maxPrice = hi + margin;
  const plotW = width - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (price: number) => PAD.left + ((price - minPrice) / (maxPrice - minPrice)) * plotW;
  const [hover, setHover] = useState<number | null>(null);
  const y = (diem: number) => PAD.top + plotH - (total > 0 ? (diem / (total * 1.1)) * plotH : 0);

  let line = "";
  if (steps.length > 0) {
    line = `M ${x(steps[0].price)} ${y(0)}`;
    steps.forEach((s, i) => {
      line += ` V ${y(s.total)}`;
      line += ` H ${i + 1 < steps.length ? x(steps[i + 1].price) : x(maxPrice)}`;
    });
  }
  const area = steps.length > 0 ? `${line} V ${y(0)} Z` : "";
  const xStep = Math.max(1, niceStep(maxPrice - minPrice, width < 420 ? 4 : 7));
  const firstTick = Math.ceil(minPrice / xStep) * xStep;
  const xTicks = Array.from({ length: Math.floor((maxPrice - firstTick) / xStep) + 1 }, (_, i) => firstTick + i * xStep);
  const showList = minPrice <= 100 && maxPrice >= 100;
  const hovered = hover !== null ? steps[hover] : null;
  // Round axis values (the exact figures are in the hover detail and the price levels table).
  const yStep = total > 0 ? niceStep(total, 3) : 1;
  const yTicks = total > 0 ? Array.from({ length: Math.floor(total / yStep) + 1 }, (_, i) => i * yStep) : [0];
  const summary =
    total > 0
      ? `Depth chart for ${book.model}: ${formatDiem(book.remaining_diem)} available today across ${book.levels.length} price levels, from ${book.levels[0].price_cents}¢ to ${book.levels[book.levels.length - 1].price_cents}¢ per diem.`
      : `Depth chart for ${book.model}: no capacity on the book.`;

  return (
    <div ref={ref} className="flex w-full flex-col gap-2">
      <p className="min-h-5 text-sm text-zinc-700 dark:text-zinc-300" aria-live="polite" data-testid="depth-detail">
        {hovered ? (
          `At ${formatCents(hovered.price)} or less: ${formatDiem(hovered.totalMicros)} available today (${formatDiem(levels[hover!].micros)} at ${formatCents(hovered.price)})`
        ) : steps.length > 0 ? (
          <PointerHint
            fine="Hover or focus the chart and use ←/→ for each price level."
            coarse="Tap the chart for the capacity at each price level."
          />
        ) : (
          ""
        )}
      </p>
      <svg
        width={width}
        height={HEIGHT}
        viewBox={`0 0 ${width} ${HEIGHT}`}
        role="img"
        aria-label={summary}
        tabIndex={steps.length > 0 ? 0 : undefined}
        onKeyDown={(event) => {
          if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
          event.preventDefault();
          const from = hover ?? (event.key === "ArrowRight" ? -1 : steps.length);
          setHover(Math.min(steps.length - 1, Math.max(0, from + (event.key === "ArrowRight" ? 1 : -1))));
        }}
        onMouseMove={(event) => {
          const box = event.currentTarget.getBoundingClientRect();
          const price = minPrice + ((event.clientX - box.left - PAD.left) / plotW) * (maxPrice - minPrice);
          let index: number | null = null;
          steps.forEach((st, i) => {
            if (st.price <= price) index = i;
          });
          setHover(index);
        }}
        // A mouse leaving clears the detail; a finger lifting does not (a tap shows a level until the next tap).
        onPointerLeave={(event) => event.pointerType === "mouse" && setHover(null)}
        onBlur={() => setHover(null)}
        className="block max-w-full text-zinc-600 dark:text-zinc-400"
      >
        {yTicks.map((t) => (
          <g key={`y${t}`}>
            <line x1={PAD.left} x2={width - PAD.right} y1={y(t)} y2={y(t)} className="stroke-zinc-100 dark:stroke-zinc-800" />
            <text x={PAD.left - 6} y={y(t)} dy="0.32em" textAnchor="end" fontSize={11} fill="currentColor">
              {formatDiem(BigInt(Math.round(t * 1_000_000)), { unit: false })}
            </text>
          </g>
        ))}
        {xTicks.map((t) => (
          <text key={`x${t}`} x={x(t)} y={HEIGHT - 8} textAnchor="middle" fontSize={11} fill="currentColor">
            {formatCents(Math.round(t))}
          </text>
        ))}
        {area && <path d={area} className="fill-emerald-500/15" />}
        {line && <path d={line} fill="none" strokeWidth={2} className="stroke-emerald-700" strokeLinejoin="round" />}
        {showList && (
          <>
            <line x1={x(100)} x2={x(100)} y1={PAD.top} y2={PAD.top + plotH} strokeDasharray="4 4" className="stroke-zinc-500" />
            <text x={x(100) + 4} y={PAD.top + 10} fontSize={11} fill="currentColor">
              list price
            </text>
          </>
        )}
        {hovered && <circle cx={x(hovered.price)} cy={y(hovered.total)} r={4.5} className="fill-emerald-800 dark:fill-emerald-300" />}
        <text x={PAD.left} y={PAD.top - 4} fontSize={10} fill="currentColor" className="hidden sm:block">
          diem
        </text>
        {steps.length === 0 && (
          <text x={PAD.left + plotW / 2} y={PAD.top + plotH / 2} textAnchor="middle" fontSize={13} fill="currentColor">
            No capacity on the book right now
          </text>
        )}
      </svg>
    </div>
  );
}
