"use client";

import { useState, type ComponentProps } from "react";
import { Field } from "@/components/ui/field";
import { formatUsd } from "@/components/ui/format";
import { parseMicros } from "@/lib/money";
import { usdAmountProblem } from "@/lib/wire";

type Bounds = { minMicros: bigint; maxMicros?: bigint };

/**
 * A USDC amount typed into a form, checked by the API's own rule (lib/wire.ts) against bounds in micro-USDC.
 * The problem shows once the field was left with something in it, or the form was submitted.
 */
export function useUsdcAmount(initial: string, bounds: Bounds, { optional = false }: { optional?: boolean } = {}) {
  const [value, setValue] = useState(initial);
  const [touched, setTouched] = useState(false);
  const problem = optional && value === "" ? null : usdAmountProblem(value, bounds, (micros) => formatUsd(micros));
  return {
    value,
    setValue,
    problem,
    /** The amount in micro-USDC once it is valid. */
    micros: problem === null ? parseMicros(value) : null,
    touched,
    touch: () => setTouched(true),
    clear: () => {
      setValue("");
      setTouched(false);
    },
  };
}

export type UsdcAmount = ReturnType<typeof useUsdcAmount>;

/** The one USDC amount input (top-up, withdrawal, key spend limit). */
export function UsdcAmountField({
  amount,
  label = "Amount (USD)",
  name = "amount",
  ...input
}: { amount: UsdcAmount; label?: string } & Omit<ComponentProps<typeof Field>, "label" | "value" | "onChange" | "onBlur" | "error">) {
  return (
    <Field
      label={label}
      name={name}
      inputMode="decimal"
      autoComplete="off"
      suffix="USDC"
      value={amount.value}
      onChange={(e) => amount.setValue(e.target.value.trim())}
      onBlur={() => amount.value && amount.touch()}
      error={amount.touched ? amount.problem : null}
      {...input}
    />
  );
}
