"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { accountKey, useAccount, type AccountProfile } from "@/components/buyer/queries";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { Field } from "@/components/ui/field";
import { priceVsList } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { api } from "@/lib/browser/api";
import { describeError } from "@/lib/browser/errors";
import { priceCentsProblem } from "@/lib/wire";

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
  const [value, setValue] = useState(account.default_max_price_cents?.toString() ?? "");
  useEffect(() => setValue(account.default_max_price_cents?.toString() ?? ""), [account.default_max_price_cents]);
  const save = useMutation({
    mutationFn: (cents: number | null) => api<AccountProfile>("/v1/account", { method: "PATCH", body: { default_max_price_cents: cents } }),
    onSuccess: (profile) => queryClient.setQueryData(accountKey, profile),
  });
  const error = value ? priceCentsProblem(value) : null;
  // Said before saving, not after: a max price far above list lets requests clear at that price.
  const warning =
    value && !error && Number(value) > 100
      ? `${value}¢ is ${priceVsList(Number(value))}: requests may clear at up to ${(Number(value) / 100).toFixed(2)}× the list price.`
      : null;
  const effective = account.default_max_price_cents ?? account.platform_default_max_price_cents;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (error) return;
    save.mutate(value ? Number(value) : null);
  }

  return (
    <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <Field
          label="Max price"
          name="default_max_price_cents"
          inputMode="numeric"
          placeholder={`${account.platform_default_max_price_cents} (platform default)`}
          suffix="¢ / diem"
          value={value}
          onChange={(e) => {
            setValue(e.target.value.trim());
            save.reset();
          }}
          error={error}
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
      {save.isError && <Alert tone="error">{describeError(save.error)}</Alert>}
      {save.isSuccess && <Alert tone="success">Saved.</Alert>}
    </form>
  );
}
