"use client";

import { useId, useState, type ReactNode } from "react";

/** The market's words, said once, shown wherever they appear (not only in the footer). */
export const GLOSSARY = {
  diem: "A diem is a unit of inference capacity: 1 diem buys $1 of inference at svc's list prices. Suppliers sell diem per day; buyers pay a price per diem.",
  burn: "Burn is the capacity a request used up, in diem: its tokens times the model's list price per million tokens. The cost is the burn times the price it cleared at.",
  vwap: "VWAP is the volume-weighted average price: the average price per diem of the trades, each weighted by how much capacity it burned.",
  clear: "A clear is one request settled on the market: the buyer is charged, the supplier credited, the platform takes its fee.",
  list: "The list price is 100¢ per diem, i.e. a diem at face value. Offers below list are discounts.",
} as const;

export type GlossaryTerm = keyof typeof GLOSSARY;

/**
 * A term with its definition in a tooltip: shown on hover and on keyboard focus, announced as the button's
 * description, dismissed with Escape (WCAG 1.4.13: hoverable, dismissible, persistent).
 */
export function Term({ term, children }: { term: GlossaryTerm; children?: ReactNode }) {
  const id = useId();
  const [open, setOpen] = useState(false);
  return (
    <span className="relative inline-block" onMouseEnter={() => setOpen(true)} onMouseLeave={() => setOpen(false)}>
      <button
        type="button"
        aria-describedby={id}
        aria-expanded={open}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onClick={() => setOpen((o) => !o)}
        onKeyDown={(event) => {
          if (event.key === "Escape") setOpen(false);
        }}
        className="cursor-help underline decoration-zinc-500 decoration-dotted underline-offset-2"
      >
        {children ?? term}
      </button>
      <span
        role="tooltip"
        id={id}
        className={`${open ? "block" : "hidden"} absolute top-full left-0 z-40 mt-1 w-64 max-w-[80vw] rounded-md bg-zinc-900 px-3 py-2 text-left text-xs font-normal tracking-normal whitespace-normal normal-case text-white shadow-lg dark:bg-zinc-100 dark:text-zinc-900`}
      >
        {GLOSSARY[term]}
      </span>
    </span>
  );
}
