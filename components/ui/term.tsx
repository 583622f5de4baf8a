"use client";

import { useEffect, useId, useRef, useState, type ReactNode } from "react";

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
 * A term with its definition in a popover that a click or a tap toggles (never hover, which a tap also fires on a
 * phone and which would close what the tap opened); Escape closes it and keeps focus on the term, and so does a click
 * or tap anywhere outside. The definition is the button's accessible description, open or not.
 */
export function Term({ term, children }: { term: GlossaryTerm; children?: ReactNode }) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    if (!open) return;
    const outside = (event: PointerEvent) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false);
    };
    const escape = (event: KeyboardEvent) => {
      if (event.key === "Escape") setOpen(false);
    };
    document.addEventListener("pointerdown", outside);
    document.addEventListener("keydown", escape);
    return () => {
      document.removeEventListener("pointerdown", outside);
      document.removeEventListener("keydown", escape);
    };
  }, [open]);
  return (
    <span ref={root} className="relative inline-block">
      <button
        type="button"
        aria-describedby={id}
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen((o) => !o)}
        className="cursor-help underline decoration-zinc-500 decoration-dotted underline-offset-2"
      >
        {children ?? term}
      </button>
      <span
        role="definition"
        id={id}
        className={`${open ? "block" : "hidden"} absolute top-full left-0 z-40 mt-1 w-64 max-w-[80vw] rounded-md bg-zinc-900 px-3 py-2 text-left text-xs font-normal tracking-normal whitespace-normal normal-case text-white shadow-lg dark:bg-zinc-100 dark:text-zinc-900`}
      >
        {GLOSSARY[term]}
      </span>
    </span>
  );
}
