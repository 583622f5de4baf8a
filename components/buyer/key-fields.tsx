"use client";

import { useId, useState, type ComponentProps } from "react";
import type { ApiKeyView } from "@/components/buyer/queries";
import { cn } from "@/components/ui/cn";
import { Field, inputClass } from "@/components/ui/field";
import { PriceCentsField, usePriceCents } from "@/components/ui/price-cents-field";
import { UsdcAmountField, useUsdcAmount } from "@/components/ui/usdc-amount-field";
import { API_KEY_NAME_MAX, LIMIT_RESETS, type LimitReset } from "@/lib/auth/schemas";

/** The API's own rule for a key name (CreateApiKeyBody), required here so no two keys end up "default". */
function keyNameProblem(name: string): string | null {
  const trimmed = name.trim();
  if (!trimmed) return "Give the key a name, so you can tell it apart later.";
  if (trimmed.length > API_KEY_NAME_MAX) return `At most ${API_KEY_NAME_MAX} characters.`;
  return null;
}

/** "25.500000" → "25.5": the form shows the amount as a person would type it. */
function trimAmount(amount: string): string {
  return amount.replace(/\.?0+$/, "");
}

/** A key's settings as typed into its create or edit form: empty for a new key, else the edited key's. */
export function useKeyDraft(key: ApiKeyView | null) {
  const [name, setName] = useState(key?.name ?? "");
  const maxPrice = usePriceCents(key?.max_price_cents == null ? "" : String(key.max_price_cents), { optional: true });
  const spendLimit = useUsdcAmount(key?.spend_limit == null ? "" : trimAmount(key.spend_limit), { minMicros: 1n }, { optional: true });
  const [limitReset, setLimitReset] = useState<LimitReset | null>(key?.limit_reset ?? null);
  const nameProblem = keyNameProblem(name);
  return {
    name,
    setName,
    nameProblem,
    maxPrice,
    spendLimit,
    limitReset,
    setLimitReset,
    /** On submit: shows every problem (the spend limit's waits for it) and says whether the draft may be sent. */
    check: () => {
      spendLimit.touch();
      return !nameProblem && !maxPrice.problem && !spendLimit.problem;
    },
    clear: () => {
      setName("");
      maxPrice.setValue("");
      spendLimit.clear();
      setLimitReset(null);
    },
  };
}

export type KeyDraft = ReturnType<typeof useKeyDraft>;

/**
 * The fields a key is created and edited with: name, max price, spend limit and when the limit resets. What the two
 * forms say differently (a suggested name, the hints) comes in through the fields' own props.
 */
export function KeyFields({
  draft,
  nameField,
  maxPriceField,
  spendLimitHint,
}: {
  draft: KeyDraft;
  nameField?: Omit<ComponentProps<typeof Field>, "label" | "value" | "onChange">;
  maxPriceField?: Omit<ComponentProps<typeof PriceCentsField>, "price" | "label">;
  spendLimitHint: string;
}) {
  return (
    <>
      <Field
        label="Name"
        name="name"
        maxLength={API_KEY_NAME_MAX}
        required
        value={draft.name}
        onChange={(e) => draft.setName(e.target.value)}
        error={draft.nameProblem}
        {...nameField}
      />
      <div className="grid gap-4 sm:grid-cols-2">
        <PriceCentsField price={draft.maxPrice} label="Max price (optional)" name="max_price_cents" {...maxPriceField} />
        <UsdcAmountField
          amount={draft.spendLimit}
          label="Spend limit (optional)"
          name="spend_limit"
          placeholder="No limit"
          hint={spendLimitHint}
        />
        <LimitResetField value={draft.limitReset} onChange={draft.setLimitReset} />
      </div>
    </>
  );
}

const RESET_LABEL: Record<LimitReset, string> = { daily: "Daily", weekly: "Weekly", monthly: "Monthly" };

/** When the spend limit resets: never (a lifetime limit), or each UTC day, week (from Monday) or month. */
function LimitResetField({ value, onChange }: { value: LimitReset | null; onChange: (value: LimitReset | null) => void }) {
  const id = useId();
  return (
    <div className="flex min-w-0 flex-col gap-1.5">
      <label htmlFor={id} className="text-sm font-medium">
        Limit resets
      </label>
      <select
        id={id}
        name="limit_reset"
        className={cn(inputClass, "pr-8")}
        value={value ?? ""}
        onChange={(e) => onChange(e.target.value === "" ? null : (e.target.value as LimitReset))}
        aria-describedby={`${id}-hint`}
      >
        <option value="">Never (a lifetime limit)</option>
        {LIMIT_RESETS.map((reset) => (
          <option key={reset} value={reset}>
            {RESET_LABEL[reset]}
          </option>
        ))}
      </select>
      <p id={`${id}-hint`} className="text-xs text-zinc-600 dark:text-zinc-400">
        At 00:00 UTC; weeks start on Monday, months on the 1st. A request in flight at the reset counts against the period it began in.
      </p>
    </div>
  );
}
