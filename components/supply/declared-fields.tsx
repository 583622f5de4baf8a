"use client";

import { useId } from "react";
import { Field, inputClass } from "@/components/ui/field";
import { QUANTIZATIONS, type DeclaredView } from "@/lib/supply/schemas";
import { MAX_CACHE_RETENTION_SECONDS, MAX_DECLARED_TOKENS, MIN_CACHE_RETENTION_SECONDS } from "@/lib/supply/schemas";

/** What a supplier declares about an offer's upstream, as the form holds it (token limits as typed). */
export type DeclaredDraft = {
  quantization: DeclaredView["quantization"];
  /** null until the supplier says: a new offer's data policy is never assumed for them. */
  retainsPrompts: boolean | null;
  trainsOnPrompts: boolean | null;
  contextTokens: string;
  maxOutputTokens: string;
  /** Prompt caching: the upstream caches prompt prefixes, and keeps one at least this many seconds (as typed). */
  cachesPrompts: boolean;
  cacheRetentionSeconds: string;
};

/**
 * A new offer's form starts with nothing declared for the supplier: quantization unknown, and the data policy unset
 * until they choose it (a supplier who skipped the section would otherwise be listed as keeping and training on prompts).
 */
export const UNDECLARED: DeclaredDraft = {
  quantization: "unknown",
  retainsPrompts: null,
  trainsOnPrompts: null,
  contextTokens: "",
  maxOutputTokens: "",
  cachesPrompts: false,
  cacheRetentionSeconds: "300",
};

export function draftOf(declared: DeclaredView): DeclaredDraft {
  return {
    quantization: declared.quantization,
    retainsPrompts: declared.data_policy.retains_prompts,
    trainsOnPrompts: declared.data_policy.trains_on_prompts,
    contextTokens: String(declared.context_tokens),
    maxOutputTokens: String(declared.max_output_tokens),
    cachesPrompts: declared.prompt_caching.caches_prompts,
    cacheRetentionSeconds: String(declared.prompt_caching.retention_seconds),
  };
}

/** The cache retention's problem as typed, or null. */
export function retentionProblem(text: string): string | null {
  if (/^\d+$/.test(text) && Number(text) >= MIN_CACHE_RETENTION_SECONDS && Number(text) <= MAX_CACHE_RETENTION_SECONDS) return null;
  return `A whole number of seconds from ${MIN_CACHE_RETENTION_SECONDS} to ${MAX_CACHE_RETENTION_SECONDS.toLocaleString("en-US")}.`;
}

/** A token limit's problem as typed ("" is no limit of its own), or null. */
export function tokensProblem(text: string): string | null {
  if (text === "") return null;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_DECLARED_TOKENS)
    return `A whole number of tokens from 1 to ${MAX_DECLARED_TOKENS.toLocaleString("en-US")}, or empty for the model's.`;
  return null;
}

/** What the data policy still needs before the offer can be posted, or null. */
export function dataPolicyProblem(draft: DeclaredDraft): { retains: string | null; trains: string | null } | null {
  const retains = draft.retainsPrompts === null ? "Say whether your upstream keeps prompts or answers." : null;
  const trains = draft.trainsOnPrompts === null ? "Say whether your upstream trains on them." : null;
  return retains || trains ? { retains, trains } : null;
}

/** The request fields for a draft: everything for a new offer, only what changed from `before` for an edit. */
export function declaredBody(draft: DeclaredDraft, before?: DeclaredDraft) {
  const changed = (key: keyof DeclaredDraft) => !before || draft[key] !== before[key];
  const tokens = (text: string) => (text === "" ? (before ? null : undefined) : Number(text));
  return {
    ...(changed("quantization") && { quantization: draft.quantization }),
    ...((changed("retainsPrompts") || changed("trainsOnPrompts")) &&
      draft.retainsPrompts !== null &&
      draft.trainsOnPrompts !== null && {
        data_policy: { retains_prompts: draft.retainsPrompts, trains_on_prompts: draft.trainsOnPrompts },
      }),
    ...(changed("contextTokens") && { context_tokens: tokens(draft.contextTokens) }),
    ...(changed("maxOutputTokens") && { max_output_tokens: tokens(draft.maxOutputTokens) }),
    ...((changed("cachesPrompts") || changed("cacheRetentionSeconds")) && {
      prompt_caching: { caches_prompts: draft.cachesPrompts, retention_seconds: Number(draft.cacheRetentionSeconds) },
    }),
  };
}

/** The declaration fields of the post and edit forms: the supplier's word, shown to buyers and routed by. */
export function DeclaredFields({
  draft,
  onChange,
  showProblems = false,
}: {
  draft: DeclaredDraft;
  onChange: (draft: DeclaredDraft) => void;
  /** After a submit: an unset data policy says what is missing. */
  showProblems?: boolean;
}) {
  const set = <K extends keyof DeclaredDraft>(key: K, value: DeclaredDraft[K]) => onChange({ ...draft, [key]: value });
  const problems = showProblems ? dataPolicyProblem(draft) : null;
  const cachingHint = useId();
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
      <div className="grid gap-3 text-sm sm:grid-cols-2">
        <YesNo
          name="retains_prompts"
          question="The upstream keeps prompts or answers"
          yes="Yes, it keeps them"
          no="No, it keeps none"
          value={draft.retainsPrompts}
          onChange={(value) => set("retainsPrompts", value)}
          problem={problems?.retains ?? null}
        />
        <YesNo
          name="trains_on_prompts"
          question="It trains on them"
          yes="Yes, it trains on them"
          no="No training"
          value={draft.trainsOnPrompts}
          onChange={(value) => set("trainsOnPrompts", value)}
          problem={problems?.trains ?? null}
        />
      </div>
      <div className="grid gap-3 text-sm sm:grid-cols-2">
        <div className="flex flex-col gap-1 self-end">
          <label className="flex items-center gap-2">
            <input
              type="checkbox"
              name="caches_prompts"
              aria-describedby={cachingHint}
              className="size-4 accent-emerald-600"
              checked={draft.cachesPrompts}
              onChange={(e) => set("cachesPrompts", e.target.checked)}
            />
            The upstream caches prompt prefixes
          </label>
          {/* A hint, not the label: the label stays short, and apart from the form's Price field for assistive tech. */}
          <p id={cachingHint} className="text-xs text-zinc-600 dark:text-zinc-400">
            Cached tokens are billed at the model&apos;s cache price.
          </p>
        </div>
        {draft.cachesPrompts && (
          <Field
            label="Keeps a prefix at least"
            name="cache_retention_seconds"
            inputMode="numeric"
            suffix="seconds"
            value={draft.cacheRetentionSeconds}
            onChange={(e) => set("cacheRetentionSeconds", e.target.value.trim())}
            error={retentionProblem(draft.cacheRetentionSeconds)}
          />
        )}
      </div>
    </fieldset>
  );
}

/** One data-policy question, answered by choosing (nothing chosen until the supplier does). */
function YesNo({
  name,
  question,
  yes,
  no,
  value,
  onChange,
  problem,
}: {
  name: string;
  question: string;
  yes: string;
  no: string;
  value: boolean | null;
  onChange: (value: boolean) => void;
  problem: string | null;
}) {
  const errorId = `${name}-error`;
  return (
    <fieldset
      className="flex min-w-0 flex-col gap-1.5"
      aria-describedby={problem ? errorId : undefined}
      aria-invalid={problem ? true : undefined}
    >
      <legend className="mb-1 font-medium">{question}</legend>
      {[
        { answer: false, label: no },
        { answer: true, label: yes },
      ].map((option) => (
        <label key={String(option.answer)} className="flex items-center gap-2">
          <input
            type="radio"
            name={name}
            className="size-4 accent-emerald-600"
            checked={value === option.answer}
            onChange={() => onChange(option.answer)}
          />
          {option.label}
        </label>
      ))}
      {problem && (
        <p id={errorId} className="text-xs font-medium text-red-600">
          {problem}
        </p>
      )}
    </fieldset>
  );
}
