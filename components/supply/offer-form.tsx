"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useModels } from "@/components/buyer/queries";
import {
  dataPolicyProblem,
  declaredBody,
  DeclaredFields,
  retentionProblem,
  tokensProblem,
  UNDECLARED,
} from "@/components/supply/declared-fields";
import { offersKey, type CheckedOfferView, type UpstreamPricingView } from "@/components/supply/queries";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { Field } from "@/components/ui/field";
import { PriceCentsField, usePriceCents } from "@/components/ui/price-cents-field";
import { formatBps, formatDiem, formatMicrosAsCents, plural, priceVsList } from "@/components/ui/format";
import { LoadingRows } from "@/components/ui/skeleton";
import { Table, Td, Th } from "@/components/ui/table";
import { useSingleFlight } from "@/components/ui/use-single-flight";
import { useSettings } from "@/components/wallet/providers";
import { api, ApiError } from "@/lib/browser/api";
import { describeError } from "@/lib/browser/errors";
import { chargeMicros, MICROS_PER_UNIT, splitCharge } from "@/lib/money";
import { dailyCapacityProblem, type CreateOfferInput } from "@/lib/supply/schemas";

type Errors = Partial<Record<keyof CreateOfferInput, string>>;

/** What the supplier keeps of one diem sold at `priceCents`, by the server's clearing rule and fee. */
function earningsPerDiemText(priceCents: number, feeBps: number): string {
  const { supplierMicros } = splitCharge(chargeMicros(MICROS_PER_UNIT, priceCents), feeBps);
  return `You earn ${formatMicrosAsCents(supplierMicros)} per diem after svc's ${formatBps(feeBps)} fee.`;
}

const DEFAULT_PRICE = "90";
const DEFAULT_CAPACITY = "25";

/** Post an offer: svc checks the upstream (GET /models with the key) before listing it, and shows what it found. */
export function OfferForm() {
  const queryClient = useQueryClient();
  const settings = useSettings();
  const models = useModels();
  const [url, setUrl] = useState("");
  const [apiKey, setApiKey] = useState("");
  const [selected, setSelected] = useState<string[]>([]);
  const price = usePriceCents(DEFAULT_PRICE);
  const [capacity, setCapacity] = useState(DEFAULT_CAPACITY);
  const [declared, setDeclared] = useState(UNDECLARED);
  const [errors, setErrors] = useState<Errors>({});
  const [submitted, setSubmitted] = useState(false);
  /** Editing a field revalidates it: its old error (and a failed check of the old values) goes away. */
  const edit =
    <T,>(field: keyof CreateOfferInput, set: (value: T) => void) =>
    (value: T) => {
      set(value);
      setErrors((e) => ({ ...e, [field]: undefined }));
      if (post.isError) post.reset();
    };

  // One POST per submit, however fast the button is clicked twice.
  const post = useSingleFlight(
    useMutation({
      mutationFn: () =>
        api<CheckedOfferView>("/v1/supply/offers", {
          method: "POST",
          body: {
            upstream_base_url: url.trim(),
            upstream_api_key: apiKey.trim(),
            models: selected,
            price_cents: Number(price.value),
            daily_capacity: capacity,
            ...declaredBody(declared),
          },
        }),
      onSuccess: () => {
        // A posted offer empties the form (a filled form invites posting it twice); the result stays shown below.
        setUrl("");
        setApiKey("");
        setSelected([]);
        price.setValue(DEFAULT_PRICE);
        setCapacity(DEFAULT_CAPACITY);
        setDeclared(UNDECLARED);
        setSubmitted(false);
        setErrors({});
        void queryClient.invalidateQueries({ queryKey: offersKey });
      },
      onError: (error) => {
        const param = error instanceof ApiError ? String(error.details.param ?? "").split(".")[0] : "";
        if (param) setErrors({ [param]: describeError(error) });
      },
    }),
  );

  function submit(event: FormEvent) {
    event.preventDefault();
    const next: Errors = {};
    if (!/^https?:\/\/\S+$/.test(url.trim())) next.upstream_base_url = "Enter the upstream's base URL, like https://api.example.com/v1.";
    if (!apiKey.trim()) next.upstream_api_key = "Enter the API key svc should use with your upstream.";
    if (selected.length === 0) next.models = "Pick at least one model.";
    next.price_cents = price.problem ?? undefined;
    next.daily_capacity = dailyCapacityProblem(capacity) ?? undefined;
    setErrors(next);
    setSubmitted(true);
    const declaredValid =
      tokensProblem(declared.contextTokens) === null &&
      tokensProblem(declared.maxOutputTokens) === null &&
      retentionProblem(declared.cacheRetentionSeconds) === null &&
      dataPolicyProblem(declared) === null;
    if (declaredValid && Object.values(next).every((problem) => problem === undefined)) post.mutate();
  }

  return (
    <Panel
      title="Post an offer"
      description="Sell capacity on your OpenAI-compatible upstream. Buyers are routed to the cheapest offer first."
    >
      <form onSubmit={submit} className="flex flex-col gap-4" noValidate>
        <div className="grid gap-4 md:grid-cols-2">
          <Field
            label="Upstream base URL"
            name="upstream_base_url"
            type="url"
            placeholder="https://api.venice.ai/api/v1"
            value={url}
            onChange={(e) => edit("upstream_base_url", setUrl)(e.target.value)}
            error={errors.upstream_base_url}
            hint="OpenAI-compatible; svc calls {base}/models and {base}/chat/completions."
            autoComplete="off"
          />
          <Field
            label="Upstream API key"
            name="upstream_api_key"
            type="password"
            value={apiKey}
            onChange={(e) => edit("upstream_api_key", setApiKey)(e.target.value)}
            error={errors.upstream_api_key}
            hint="Stored encrypted; never shown again or shared with buyers."
            autoComplete="off"
          />
        </div>
        <fieldset className="flex flex-col gap-2" aria-describedby={errors.models ? "models-error" : undefined}>
          <legend className="text-sm font-medium">Models</legend>
          {models.isPending ? (
            <LoadingRows label="Loading models" rows={1} />
          ) : models.isError ? (
            <Alert tone="error">{describeError(models.error)}</Alert>
          ) : (
            <div className="grid gap-2 sm:grid-cols-2">
              {models.data.data.map((m) => (
                <label
                  key={m.id}
                  className="flex cursor-pointer items-center gap-3 rounded-lg border border-zinc-200 px-3 py-2 text-sm has-[:checked]:border-emerald-500 has-[:checked]:bg-emerald-50/60 dark:border-zinc-700 dark:has-[:checked]:bg-emerald-950/30"
                >
                  <input
                    type="checkbox"
                    className="size-4 accent-emerald-600"
                    checked={selected.includes(m.id)}
                    onChange={(e) =>
                      edit("models", setSelected)(e.target.checked ? [...selected, m.id] : selected.filter((x) => x !== m.id))
                    }
                  />
                  <span className="min-w-0 flex-1">
                    <span className="block font-medium">{m.name}</span>
                    <span className="block font-mono text-xs text-zinc-600">{m.id}</span>
                  </span>
                </label>
              ))}
            </div>
          )}
          {errors.models && (
            <p id="models-error" className="text-xs font-medium text-red-600">
              {errors.models}
            </p>
          )}
        </fieldset>
        <div className="grid gap-4 sm:grid-cols-2">
          <PriceCentsField
            price={price}
            label="Price"
            name="price_cents"
            onValueChange={edit("price_cents", price.setValue)}
            error={errors.price_cents}
            hint={
              price.problem === null
                ? `${priceVsList(Number(price.value))}. ${earningsPerDiemText(Number(price.value), settings.platformFeeBps)}`
                : "100¢ is the list price."
            }
          />
          <Field
            label="Daily capacity"
            name="daily_capacity"
            inputMode="decimal"
            suffix="diem"
            value={capacity}
            onChange={(e) => edit("daily_capacity", setCapacity)(e.target.value.trim())}
            error={errors.daily_capacity}
            hint="Resets at 00:00 UTC. 1 diem = $1 of list-price inference."
          />
        </div>
        <DeclaredFields draft={declared} onChange={setDeclared} showProblems={submitted} />
        {post.isError && (
          <Alert tone="error" title="The offer was not posted">
            {describeError(post.error)}
          </Alert>
        )}
        <div>
          <Button type="submit" loading={post.isPending}>
            {post.isPending ? "Checking your upstream…" : "Post offer"}
          </Button>
        </div>
        {post.isSuccess && <UpstreamCheckResult offer={post.data} />}
      </form>
    </Panel>
  );
}

const COMPARISON: Record<UpstreamPricingView["comparison"], { label: string; tone: "green" | "amber" | "neutral" | "sky" }> = {
  same: { label: "same as list", tone: "green" },
  upstream_lower: { label: "upstream cheaper", tone: "green" },
  upstream_higher: { label: "upstream dearer", tone: "amber" },
  mixed: { label: "mixed", tone: "sky" },
  unknown: { label: "not published", tone: "neutral" },
};

function UpstreamCheckResult({ offer }: { offer: CheckedOfferView }) {
  const pricing = offer.upstream_pricing ?? [];
  return (
    <Alert tone="success" title="Upstream check passed: your offer is posted">
      <div className="mt-2 flex flex-col gap-3 text-zinc-800 dark:text-zinc-200">
        <p>
          {plural(offer.models.length, "model")} at {offer.price_cents}¢ / diem, {formatDiem(offer.daily_capacity)} per day.
          {offer.on_book ? " It is on the order book now." : " It is not on the book yet."}
        </p>
        {pricing.length > 0 && (
          <div className="rounded-lg bg-white/70 p-3 dark:bg-zinc-900/50">
            <Table caption="Upstream pricing" className="text-xs">
              <thead>
                <tr>
                  <Th>Model</Th>
                  <Th>svc list price (in / out)</Th>
                  <Th>Upstream price (in / out)</Th>
                  <Th>
                    <span className="sr-only">Comparison</span>
                  </Th>
                </tr>
              </thead>
              <tbody>
                {pricing.map((p) => (
                  <tr key={p.model}>
                    <Td className="font-mono">{p.model}</Td>
                    <Td className="tabular-nums">
                      {formatDiem(p.list_price.input_diem_per_mtok, { unit: false })} /{" "}
                      {formatDiem(p.list_price.output_diem_per_mtok, { unit: false })}
                    </Td>
                    <Td className="tabular-nums">
                      {p.upstream_price
                        ? `${formatDiem(p.upstream_price.input_diem_per_mtok, { unit: false })} / ${formatDiem(p.upstream_price.output_diem_per_mtok, { unit: false })}`
                        : "—"}
                    </Td>
                    <Td>
                      <Badge tone={COMPARISON[p.comparison].tone}>{COMPARISON[p.comparison].label}</Badge>
                    </Td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <p className="mt-2 text-xs text-zinc-600">Diem per 1M tokens. svc meters capacity burn at its list price.</p>
          </div>
        )}
      </div>
    </Alert>
  );
}
