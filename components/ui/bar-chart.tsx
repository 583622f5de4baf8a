"use client";

import { useId, useState, type KeyboardEvent } from "react";
import { useWidth } from "@/components/market/use-width";
import { niceTicks } from "@/components/ui/chart-scale";
import { PointerHint } from "@/components/ui/pointer-hint";

export type ChartPoint = {
  /** Short x label ("Nov 3", "14:00"). */
  label: string;
  /** The bar's height, in the chart's unit (micro-dollars, micro-diem…) as a number. */
  value: number;
  /** What the hover/focus detail says about this point, exactly ("Nov 3: $1.234567 · 4 requests"). */
  detail: string;
  /**
   * Optional second series drawn as a line with dots (e.g. a price), with its own axis on the right. null is a point
   * without a value (a bucket where nothing traded): the line breaks there instead of drawing through it.
   */
  line?: number | null;
  /** Label this point on the x axis (a round time, say). When no point sets it, labels are spread evenly. */
  tick?: boolean;
};

type Props = {
  points: ChartPoint[];
  /** Names the chart (its accessible name and the data table's caption). */
  title: string;
  /** Formats an axis value of the bars ("$1.20"); rounded is fine here, the detail is exact. */
  formatValue: (value: number) => string;
  /** Formats the line's axis, when there is a line. */
  formatLine?: (value: number) => string;
  height?: number;
  /** Column headers of the data table for screen readers. */
  columns?: [string, string];
};

function niceMax(max: number): { top: number; step: number } {
  if (max <= 0) return { top: 1, step: 0.5 };
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const n = raw / power;
  const step = (n <= 1 ? 1 : n <= 2 ? 2 : n <= 2.5 ? 2.5 : n <= 5 ? 5 : 10) * power;
  return { top: Math.ceil(max / step) * step, step };
}

/**
 * Bars with a y axis that says what they are worth, x labels, and a detail for the point under the pointer, the
 * finger (a tap) or the keyboard (←/→ move, it is one tab stop). Screen readers get the same numbers as a table.
 */
export function BarChart({ points, title, formatValue, formatLine, height = 200, columns = ["Day", "Value"] }: Props) {
  const [ref, width] = useWidth<HTMLDivElement>(600);
  const [active, setActive] = useState<number | null>(null);
  const tableId = useId();
  const hasLine = points.some((p) => p.line !== undefined && p.line !== null);
  const { top, step } = niceMax(Math.max(0, ...points.map((p) => p.value)));
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  // The left margin fits the longest axis label ("$0.00003"), about 6.5 px a character at 11 px.
  const widestTick = Math.max(...ticks.map((t) => formatValue(t).length));
  const pad = { top: 12, right: hasLine ? 48 : 12, bottom: 26, left: Math.max(40, Math.ceil(widestTick * 6.5) + 10) };
  const plotW = Math.max(10, width - pad.left - pad.right);
  const plotH = height - pad.top - pad.bottom;
  const lineValues = points.map((p) => p.line).filter((v): v is number => typeof v === "number");
  const lineTicks = lineValues.length ? niceTicks(Math.min(...lineValues), Math.max(...lineValues), 3, 0) : [0, 1];
  const lineLo = lineTicks[0];
  const lineHi = lineTicks[lineTicks.length - 1];
  const slot = plotW / Math.max(1, points.length);
  const barW = Math.max(2, Math.min(40, slot * 0.7));
  const y = (v: number) => pad.top + plotH - (v / top) * plotH;
  const yLine = (v: number) => pad.top + plotH - ((v - lineLo) / (lineHi - lineLo)) * plotH;
  const cx = (i: number) => pad.left + i * slot + slot / 2;
  const maxLabels = Math.max(2, Math.floor(plotW / 64));
  const marked = points.some((p) => p.tick);
  const candidates = points.flatMap((p, i) => (!marked || p.tick ? [i] : []));
  const labelEvery = Math.max(1, Math.ceil(candidates.length / maxLabels));
  const labelled = new Set(candidates.filter((_, k) => k % labelEvery === 0));
  // A new segment after every point without a value: the line shows the gap.
  const linePath = hasLine
    ? points
        .map((p, i) =>
          typeof p.line === "number" ? `${typeof points[i - 1]?.line === "number" ? "L" : "M"} ${cx(i)} ${yLine(p.line)}` : "",
        )
        .filter(Boolean)
        .join(" ")
    : "";

  function onKeyDown(event: KeyboardEvent) {
    if (points.length === 0) return;
    if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      event.preventDefault();
      const from = active ?? (event.key === "ArrowRight" ? -1 : points.length);
      setActive(Math.min(points.length - 1, Math.max(0, from + (event.key === "ArrowRight" ? 1 : -1))));
    } else if (event.key === "Escape") setActive(null);
  }

  const shown = active !== null ? points[active] : null;
  return (
    <div ref={ref} className="flex w-full min-w-0 flex-col gap-2">
      <p className="min-h-5 text-sm text-zinc-700 dark:text-zinc-300" aria-live="polite" data-testid="chart-detail">
        {shown ? (
          shown.detail
        ) : (
          <PointerHint
            fine={`Hover or focus the chart and use ←/→ for each ${columns[0].toLowerCase()}.`}
            coarse={`Tap a bar for its ${columns[0].toLowerCase()}.`}
          />
        )}
      </p>
      <svg
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={title}
        aria-describedby={tableId}
        tabIndex={0}
        onKeyDown={onKeyDown}
        // A mouse leaving clears the detail; a finger lifting does not (a tap shows a bar until the next tap).
        onPointerLeave={(event) => event.pointerType === "mouse" && setActive(null)}
        onBlur={() => setActive(null)}
        className="block max-w-full rounded-md text-zinc-600 dark:text-zinc-400"
      >
        {ticks.map((t) => (
          <g key={t}>
            <line x1={pad.left} x2={width - pad.right} y1={y(t)} y2={y(t)} className="stroke-zinc-200 dark:stroke-zinc-800" />
            <text x={pad.left - 6} y={y(t)} dy="0.32em" textAnchor="end" fontSize={11} fill="currentColor">
              {formatValue(t)}
            </text>
          </g>
        ))}
        {hasLine &&
          lineTicks.map((t) => (
            <text key={`l${t}`} x={width - pad.right + 6} y={yLine(t)} dy="0.32em" fontSize={11} className="fill-sky-700 dark:fill-sky-300">
              {(formatLine ?? String)(t)}
            </text>
          ))}
        {points.map((p, i) => (
          <g key={i} onMouseEnter={() => setActive(i)} onClick={() => setActive(i)}>
            <rect x={pad.left + i * slot} y={pad.top} width={slot} height={plotH} fill="transparent" />
            <rect
              x={cx(i) - barW / 2}
              y={y(p.value)}
              width={barW}
              height={Math.max(p.value > 0 ? 1.5 : 0, pad.top + plotH - y(p.value))}
              rx={1.5}
              className={active === i ? "fill-emerald-800 dark:fill-emerald-300" : "fill-emerald-600 dark:fill-emerald-500"}
            />
            {labelled.has(i) && (
              <text x={cx(i)} y={height - 8} textAnchor="middle" fontSize={11} fill="currentColor">
                {p.label}
              </text>
            )}
          </g>
        ))}
        <line
          x1={pad.left}
          x2={width - pad.right}
          y1={pad.top + plotH}
          y2={pad.top + plotH}
          className="stroke-zinc-400 dark:stroke-zinc-600"
        />
        {linePath && <path d={linePath} fill="none" strokeWidth={2} className="stroke-sky-700 dark:stroke-sky-300" pointerEvents="none" />}
        {hasLine &&
          points.map((p, i) =>
            typeof p.line === "number" ? (
              <circle
                key={`c${i}`}
                cx={cx(i)}
                cy={yLine(p.line)}
                r={active === i ? 4.5 : 3}
                className="fill-sky-700 dark:fill-sky-300"
                pointerEvents="none"
              />
            ) : null,
          )}
        {active !== null && (
          <line
            x1={cx(active)}
            x2={cx(active)}
            y1={pad.top}
            y2={pad.top + plotH}
            strokeDasharray="3 3"
            className="stroke-zinc-500"
            pointerEvents="none"
          />
        )}
      </svg>
      {/* In a sr-only box: a table ignores width: 1px and would widen the page. */}
      <div className="sr-only">
        <table id={tableId}>
          <caption>{title}</caption>
          <thead>
            <tr>
              <th scope="col">{columns[0]}</th>
              <th scope="col">{columns[1]}</th>
            </tr>
          </thead>
          <tbody>
            {points.map((p, i) => (
              <tr key={i}>
                <td>{p.label}</td>
                <td>{p.detail}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
