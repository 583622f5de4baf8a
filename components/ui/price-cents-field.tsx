"use client";

import { useState, type ComponentProps } from "react";
import { Field } from "@/components/ui/field";
import { priceCentsProblem } from "@/lib/wire";

/**
 * A price in whole cents per diem typed into a form (an offer's price, a key's or the account's max price), checked
 * by the API's own rule (lib/wire.ts: 1 to 10000). An optional one may be left empty: the form says what applies then.
 */
export function usePriceCents(initial: string, { optional = false }: { optional?: boolean } = {}) {
  const [value, setValue] = useState(initial);
  const problem = optional && value === "" ? null : priceCentsProblem(value);
  return { value, setValue, problem };
}

export type PriceCents = ReturnType<typeof usePriceCents>;

/** The one price-in-cents input. Its problem shows as it is typed, unless the form passes its own `error`. */
export function PriceCentsField({
  price,
  onValueChange = price.setValue,
  ...input
}: {
  price: PriceCents;
  label: string;
  /** Instead of `price.setValue`, for a form whose typing does more (clears an error, a stale answer). */
  onValueChange?: (value: string) => void;
} & Omit<ComponentProps<typeof Field>, "label" | "value" | "onChange" | "inputMode" | "suffix">) {
  return (
    <Field
      inputMode="numeric"
      suffix="¢ / diem"
      value={price.value}
      onChange={(e) => onValueChange(e.target.value.trim())}
      error={price.problem}
      {...input}
    />
  );
}
