"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, type FormEvent } from "react";
import { accountKey, useAccount, useModels, type AccountProfile } from "@/components/buyer/queries";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { priceVsList } from "@/components/ui/format";
import { PriceCentsField, usePriceCents } from "@/components/ui/price-cents-field";
import { QueryState } from "@/components/ui/query-state";
import { useSingleFlight } from "@/components/ui/use-single-flight";
import { api } from "@/lib/browser/api";
import { describeError } from "@/lib/browser/errors";

export function MaxPricePanel() {
  const account = useAccount();
  return (
    <Panel
      title="Default max price"
      description="The most you pay per diem when neither the request (X-Svc-Max-Cents) nor the key sets one. 100¢ is the list price."
    >
      <QueryState query={account} loadingLabel="Loading your max price" errorTitle="Couldn't load your settings">
        {(a) => <MaxPriceForm account={a} />}
      </QueryState>
    </Panel>
  );
}

function MaxPriceForm({ account }: { account: AccountProfile }) {
  const queryClient = useQueryClient();
  const price = usePriceCents(account.default_max_price_cents?.toString() ?? "", { optional: true });
  const { value, setValue, problem: error } = price;
  useEffect(() => setValue(account.default_max_price_cents?.toString() ?? ""), [account.default_max_price_cents, setValue]);
  // One PATCH per save, however fast the button is clicked twice.
  const save = useSingleFlight(
    useMutation({
      mutationFn: (cents: number | null) =>
        api<AccountProfile>("/v1/account", { method: "PATCH", body: { default_max_price_cents: cents } }),
      onSuccess: (profile) => queryClient.setQueryData(accountKey, profile),
    }),
  );
  // Said before saving, not after: a max price far above list lets requests clear at that price.
  const warning =
    value && !error && Number(value) > 100
      ? `${value}¢ is ${priceVsList(Number(value))}: requests may clear at up to ${(Number(value) / 100).toFixed(2)}× the list price.`
      : null;
  const effective = account.default_max_price_cents ?? account.platform_default_max_price_cents;
  const models = useModels();
  const reach = !error ? routingReach(value ? Number(value) : account.platform_default_max_price_cents, models.data?.data ?? []) : null;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (error) return;
    save.mutate(value ? Number(value) : null);
  }

  return (
    <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <PriceCentsField
          price={price}
          label="Max price"
          name="default_max_price_cents"
          placeholder={`${account.platform_default_max_price_cents} (platform default)`}
          onValueChange={(typed) => {
            setValue(typed);
            save.reset();
          }}
          hint="100¢ is the list price; lower means only offers at or below it serve you."
          className="sm:max-w-64"
        />
        <div className="flex gap-2 sm:pt-7">
          <Button type="submit" variant="secondary" loading={save.isPending}>
            Save
          </Button>
          {account.default_max_price_cents !== null && (
            <Button variant="ghost" disabled={save.isPending} onClick={() => save.mutate(null)}>
              Use platform default
            </Button>
          )}
        </div>
      </div>
      <p className="text-sm text-zinc-600 dark:text-zinc-400" aria-live="polite">
        Now: <strong className="text-zinc-800 dark:text-zinc-200">{effective}¢ / diem</strong> ({priceVsList(effective)})
        {account.default_max_price_cents === null && " · platform default"}
      </p>
      {warning && (
        <Alert tone="warning" title="Above the list price">
          {warning}
        </Alert>
      )}
      {reach && <ReachNotice reach={reach} />}
      {save.isError && <Alert tone="error">{describeError(save.error)}</Alert>}
      {save.isSuccess && <Alert tone="success">Saved.</Alert>}
    </form>
  );
}

type Reach = { max: number; offered: { id: string; best: number }[]; routable: number };

/** Which offered models a max price routes to right now (best price on the book at or below it). */
function routingReach(max: number, models: { id: string; best_price_cents: number | null }[]): Reach | null {
  const offered = models.filter((m) => m.best_price_cents !== null).map((m) => ({ id: m.id, best: m.best_price_cents! }));
  if (offered.length === 0) return null;
  return { max, offered, routable: offered.filter((m) => m.best <= max).length };
}

/**
 * Said before saving: a max price below every offer refuses every request (503), and one below some offers refuses
 * those models. Names the price that would route (the book moves: it is what routes now).
 */
function ReachNotice({ reach }: { reach: Reach }) {
  const { max, offered, routable } = reach;
  if (routable === offered.length) return null;
  const cheapest = offered.reduce((a, b) => (b.best < a.best ? b : a));
  if (routable === 0)
    return (
      <Alert tone="warning" title="Nothing routes at this price">
        At {max}¢ no model has an offer right now: requests would be refused (503) until you raise it. The cheapest offer is {cheapest.best}
        ¢ ({cheapest.id}).
      </Alert>
    );
  const priced = offered.filter((m) => m.best > max).sort((a, b) => a.best - b.best);
  return (
    <Alert tone="info" title={`${routable} of ${offered.length} offered models route at ${max}¢`}>
      {priced
        .slice(0, 3)
        .map((m) => `${m.id} needs ${m.best}¢`)
        .join(", ")}
      {priced.length > 3 && `, and ${priced.length - 3} more`}.
    </Alert>
  );
}
