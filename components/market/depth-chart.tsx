"use client";

import type { BookView } from "@/components/market/queries";
import { useWidth } from "@/components/market/use-width";
import { formatDiem } from "@/components/ui/format";

const HEIGHT = 240;
const PAD = { top: 16, right: 16, bottom: 28, left: 52 };

function niceStep(range: number, ticks: number): number {
  const raw = range / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const n = raw / power;
  return (n < 1.5 ? 1 : n < 3 ? 2 : n < 7 ? 5 : 10) * power;
}

/**
 * Cumulative capacity (diem left today) against price (cents per diem): what a buyer with a given max
 * price can be routed to. A step rises at each price level; the dashed line marks the list price.
 */
export function DepthChart({ book }: { book: BookView }) {
  const [ref, width] = useWidth<HTMLDivElement>(640);
  const levels = book.levels.map((l) => ({ price: l.price_cents, diem: Number(l.remaining_diem) }));
  let cumulative = 0;
  const steps = levels.map((l) => ({ price: l.price, total: (cumulative += l.diem) }));
  const total = cumulative;
  const maxPrice = Math.max(120, ...levels.map((l) => l.price)) * 1.1;
  const plotW = width - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (price: number) => PAD.left + (price / maxPrice) * plotW;
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
  const xStep = niceStep(maxPrice, width < 420 ? 4 : 7);
  const xTicks = Array.from({ length: Math.floor(maxPrice / xStep) + 1 }, (_, i) => i * xStep);
  const yTicks = total > 0 ? [0, total / 2, total] : [0];
  const summary =
    total > 0
      ? `Depth chart for ${book.model}: ${formatDiem(book.remaining_diem)} available today across ${book.levels.length} price levels, from ${book.levels[0].price_cents}¢ to ${book.levels[book.levels.length - 1].price_cents}¢ per diem.`
      : `Depth chart for ${book.model}: no capacity on the book.`;

  return (
    <div ref={ref} className="w-full">
      <svg width={width} height={HEIGHT} viewBox={`0 0 ${width} ${HEIGHT}`} role="img" aria-label={summary} className="block max-w-full text-zinc-500 dark:text-zinc-400">
        {yTicks.map((t) => (
          <g key={`y${t}`}>
            <line x1={PAD.left} x2={width - PAD.right} y1={y(t)} y2={y(t)} className="stroke-zinc-100 dark:stroke-zinc-800" />
            <text x={PAD.left - 6} y={y(t)} dy="0.32em" textAnchor="end" fontSize={11} fill="currentColor">
              {formatDiem(t.toFixed(6), { unit: false })}
            </text>
          </g>
        ))}
        {xTicks.map((t) => (
          <text key={`x${t}`} x={x(t)} y={HEIGHT - 8} textAnchor="middle" fontSize={11} fill="currentColor">
            {Math.round(t)}¢
          </text>
        ))}
        {area && <path d={area} className="fill-emerald-500/15" />}
        {line && <path d={line} fill="none" strokeWidth={2} className="stroke-emerald-600" strokeLinejoin="round" />}
        <line x1={x(100)} x2={x(100)} y1={PAD.top} y2={PAD.top + plotH} strokeDasharray="4 4" className="stroke-zinc-400" />
        <text x={x(100) + 4} y={PAD.top + 10} fontSize={11} fill="currentColor">
          list price
        </text>
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
