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
  const [value, setValue] = useState(account.defaultMaxPriceCents?.toString() ?? "");
  useEffect(() => setValue(account.defaultMaxPriceCents?.toString() ?? ""), [account.defaultMaxPriceCents]);
  const save = useMutation({
    mutationFn: (defaultMaxPriceCents: number | null) => api<AccountProfile>("/v1/account", { method: "PATCH", body: { defaultMaxPriceCents } }),
    onSuccess: (profile) => queryClient.setQueryData(accountKey, profile),
  });
  const cents = Number(value);
  const error = value && (!/^\d{1,5}$/.test(value) || cents < 1 || cents > 10_000) ? "Whole cents per diem, 1 to 10000." : null;
  const effective = account.defaultMaxPriceCents ?? account.platformDefaultMaxPriceCents;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (error) return;
    save.mutate(value ? cents : null);
  }

  return (
    <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <Field
          label="Max price"
          name="defaultMaxPriceCents"
          inputMode="numeric"
          placeholder={`${account.platformDefaultMaxPriceCents} (platform default)`}
          suffix="¢ / diem"
          value={value}
          onChange={(e) => setValue(e.target.value.trim())}
          error={error}
          className="sm:max-w-64"
        />
        <div className="flex gap-2 sm:pt-7">
          <Button type="submit" variant="secondary" loading={save.isPending}>
            Save
          </Button>
          {account.defaultMaxPriceCents !== null && (
            <Button variant="ghost" disabled={save.isPending} onClick={() => save.mutate(null)}>
              Use platform default
            </Button>
          )}
        </div>
      </div>
      <p className="text-sm text-zinc-500 dark:text-zinc-400" aria-live="polite">
        Now: <strong className="text-zinc-800 dark:text-zinc-200">{effective}¢ / diem</strong> ({priceVsList(effective)})
        {account.defaultMaxPriceCents === null && " · platform default"}
      </p>
      {save.isError && <Alert tone="error">{describeError(save.error)}</Alert>}
      {save.isSuccess && <Alert tone="success">Saved.</Alert>}
    </form>
  );
}
