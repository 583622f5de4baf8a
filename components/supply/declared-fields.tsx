"use client";

import { Field, inputClass } from "@/components/ui/field";
import { QUANTIZATIONS, type DeclaredView } from "@/lib/supply/schemas";
import { MAX_DECLARED_TOKENS } from "@/lib/supply/schemas";

/** What a supplier declares about an offer's upstream, as the form holds it (token limits as typed). */
export type DeclaredDraft = {
  quantization: DeclaredView["quantization"];
  retainsPrompts: boolean;
  trainsOnPrompts: boolean;
  contextTokens: string;
  maxOutputTokens: string;
};

/** A new offer starts from what svc assumes of an offer that has not said: quantization unknown, prompts kept and trained on. */
export const UNDECLARED: DeclaredDraft = {
  quantization: "unknown",
  retainsPrompts: true,
  trainsOnPrompts: true,
  contextTokens: "",
  maxOutputTokens: "",
};

export function draftOf(declared: DeclaredView): DeclaredDraft {
  return {
    quantization: declared.quantization,
    retainsPrompts: declared.data_policy.retains_prompts,
    trainsOnPrompts: declared.data_policy.trains_on_prompts,
    contextTokens: String(declared.context_tokens),
    maxOutputTokens: String(declared.max_output_tokens),
  };
}

/** A token limit's problem as typed ("" is no limit of its own), or null. */
export function tokensProblem(text: string): string | null {
  if (text === "") return null;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_DECLARED_TOKENS)
    return `A whole number of tokens from 1 to ${MAX_DECLARED_TOKENS.toLocaleString("en-US")}, or empty for the model's.`;
  return null;
}

/** The request fields for a draft: everything for a new offer, only what changed from `before` for an edit. */
export function declaredBody(draft: DeclaredDraft, before?: DeclaredDraft) {
  const changed = (key: keyof DeclaredDraft) => !before || draft[key] !== before[key];
  const tokens = (text: string) => (text === "" ? (before ? null : undefined) : Number(text));
  return {
    ...(changed("quantization") && { quantization: draft.quantization }),
    ...((changed("retainsPrompts") || changed("trainsOnPrompts")) && {
      data_policy: { retains_prompts: draft.retainsPrompts, trains_on_prompts: draft.trainsOnPrompts },
    }),
    ...(changed("contextTokens") && { context_tokens: tokens(draft.contextTokens) }),
    ...(changed("maxOutputTokens") && { max_output_tokens: tokens(draft.maxOutputTokens) }),
  };
}

/** The declaration fields of the post and edit forms: the supplier's word, shown to buyers and routed by. */
export function DeclaredFields({ draft, onChange }: { draft: DeclaredDraft; onChange: (draft: DeclaredDraft) => void }) {
  const set = <K extends keyof DeclaredDraft>(key: K, value: DeclaredDraft[K]) => onChange({ ...draft, [key]: value });
  return (
    <fieldset className="flex flex-col gap-3">
      <legend className="text-sm font-medium">What you declare</legend>
      <p className="-mt-1 text-xs text-zinc-600 dark:text-zinc-400">
        Shown to buyers with your offer and routed by (a buyer can exclude offers that keep prompts, or pick quantizations). It is your
        word; the platform&apos;s fidelity probes check what they can.
      </p>
      <div className="grid gap-4 sm:grid-cols-3">
        <div className="flex min-w-0 flex-col gap-1.5">
          <label htmlFor="declared-quantization" className="text-sm font-medium">
            Quantization
          </label>
          <select
            id="declared-quantization"
            name="quantization"
            className={inputClass}
            value={draft.quantization}
            onChange={(e) => set("quantization", e.target.value as DeclaredDraft["quantization"])}
          >
            {QUANTIZATIONS.map((q) => (
              <option key={q} value={q}>
                {q === "unknown" ? "unknown (not declared)" : q}
              </option>
            ))}
          </select>
        </div>
        <Field
          label="Context limit"
          name="context_tokens"
          inputMode="numeric"
          suffix="tokens"
          placeholder="the model's"
          value={draft.contextTokens}
          onChange={(e) => set("contextTokens", e.target.value.trim())}
          error={tokensProblem(draft.contextTokens)}
        />
        <Field
          label="Output limit"
          name="max_output_tokens"
          inputMode="numeric"
          suffix="tokens"
          placeholder="the model's"
          value={draft.maxOutputTokens}
          onChange={(e) => set("maxOutputTokens", e.target.value.trim())}
          error={tokensProblem(draft.maxOutputTokens)}
        />
      </div>
      <div className="flex flex-col gap-2 text-sm sm:flex-row sm:gap-6">
        <label className="flex items-center gap-2">
          <input
            type="checkbox"
            className="size-4 accent-emerald-600"
            checked={draft.retainsPrompts}
            onChange={(e) => set("retainsPrompts", e.target.checked)}
          />
          The upstream keeps prompts or answers
        </label>
        <label className="flex items-center gap-2">
          <input
            type="checkbox"
            className="size-4 accent-emerald-600"
            checked={draft.trainsOnPrompts}
            onChange={(e) => set("trainsOnPrompts", e.target.checked)}
          />
          It trains on them
        </label>
      </div>
    </fieldset>
  );
}
