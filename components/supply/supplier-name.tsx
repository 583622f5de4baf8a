"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { accountKey, useAccount, type AccountProfile } from "@/components/buyer/queries";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { Field } from "@/components/ui/field";
import { QueryState } from "@/components/ui/query-state";
import { useSingleFlight } from "@/components/ui/use-single-flight";
import { SUPPLIER_NAME_MAX, SupplierDisplayName } from "@/lib/account/schemas";
import { api } from "@/lib/browser/api";
import { describeError } from "@/lib/browser/errors";

/** The name buyers see beside this supplier's public id, on the provider table and GET /v1/market/models/{id}/offers. */
export function SupplierNamePanel() {
  const account = useAccount();
  return (
    <Panel
      title="Your supplier name"
      description="Buyers see it beside your public id on each model's provider table and in the offers API. It must be unique."
    >
      <QueryState query={account} loadingLabel="Loading your supplier name" errorTitle="Couldn't load your settings">
        {(a) => <SupplierNameForm account={a} />}
      </QueryState>
    </Panel>
  );
}

function SupplierNameForm({ account }: { account: AccountProfile }) {
  const queryClient = useQueryClient();
  // Starts from the saved name; what is typed then stays the field's own (a save updates the account, not the field).
  const [name, setName] = useState(account.display_name ?? "");
  const [problem, setProblem] = useState<string | null>(null);
  const save = useSingleFlight(
    useMutation({
      mutationFn: (displayName: string | null) =>
        api<AccountProfile>("/v1/account", { method: "PATCH", body: { display_name: displayName } }),
      onSuccess: (profile) => queryClient.setQueryData(accountKey, profile),
    }),
  );

  function submit(event: FormEvent) {
    event.preventDefault();
    const parsed = SupplierDisplayName.safeParse(name);
    if (!parsed.success) {
      setProblem(`The name ${parsed.error.issues[0]?.message ?? "is not valid"}.`);
      return;
    }
    save.mutate(parsed.data);
  }

  return (
    <form onSubmit={submit} className="flex flex-col gap-3" noValidate>
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <Field
          label="Supplier name"
          name="display_name"
          className="sm:max-w-80 sm:flex-1"
          maxLength={SUPPLIER_NAME_MAX}
          autoComplete="organization"
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            setProblem(null);
            save.reset();
          }}
          error={problem}
          hint={
            <>
              Public id <span className="font-mono">{account.supplier_id}</span>
            </>
          }
        />
        <div className="flex gap-2 sm:pt-7">
          <Button type="submit" variant="secondary" loading={save.isPending}>
            Save name
          </Button>
          {account.display_name !== null && (
            <Button variant="ghost" disabled={save.isPending} onClick={() => save.mutate(null)}>
              Remove name
            </Button>
          )}
        </div>
      </div>
      {save.isError && <Alert tone="error">{describeError(save.error)}</Alert>}
      {save.isSuccess && (
        <Alert tone="success">
          {save.data.display_name ? `Buyers now see you as ${save.data.display_name}.` : "Your name was removed."}
        </Alert>
      )}
    </form>
  );
}
