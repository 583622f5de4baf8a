"use client";

import { useState, type FormEvent } from "react";
import { apiKeysKey, useApiKeys, type ApiKeyView, type CreatedApiKey } from "@/components/buyer/queries";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { Dialog, DialogActions } from "@/components/ui/dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Field, inputClass } from "@/components/ui/field";
import { formatCents, formatDateTime, formatUsd } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { Table, Td, Th } from "@/components/ui/table";
import { UsdcAmountField, useUsdcAmount } from "@/components/ui/usdc-amount-field";
import { useListMutation } from "@/components/ui/use-list-mutation";
import { useSettings } from "@/components/wallet/providers";
import { api } from "@/lib/browser/api";
import { priceCentsProblem } from "@/lib/wire";

export function ApiKeys() {
  const keys = useApiKeys();
  const [createOpen, setCreateOpen] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKeyView | null>(null);

  return (
    <Panel
      title="API keys"
      description="Bearer keys for POST /v1/chat/completions. Each key can carry its own max price and spend limit."
      actions={<Button onClick={() => setCreateOpen(true)}>Create key</Button>}
    >
      <QueryState query={keys} loadingLabel="Loading your API keys" errorTitle="Couldn't load your API keys">
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No API keys yet" action={<Button onClick={() => setCreateOpen(true)}>Create your first key</Button>}>
              Create a key to call svc from code, with the OpenAI SDK or curl.
            </EmptyState>
          ) : (
            <KeysTable keys={data} onRevoke={setRevoking} />
          )
        }
      </QueryState>
      <CreateKeyDialog
        open={createOpen}
        onClose={() => setCreateOpen(false)}
        onCreated={setCreated}
      />
      <RevealKeyDialog created={created} onClose={() => setCreated(null)} />
      <RevokeKeyDialog apiKey={revoking} onClose={() => setRevoking(null)} />
    </Panel>
  );
}

function status(key: ApiKeyView): { label: string; tone: "green" | "neutral" | "amber" } {
  if (key.revoked_at) return { label: "Revoked", tone: "neutral" };
  if (key.expires_at && new Date(key.expires_at) <= new Date()) return { label: "Expired", tone: "amber" };
  return { label: "Active", tone: "green" };
}

function KeysTable({ keys, onRevoke }: { keys: ApiKeyView[]; onRevoke: (key: ApiKeyView) => void }) {
  return (
    <Table caption="API keys">
      <thead>
        <tr>
          <Th>Name</Th>
          <Th className="hidden sm:table-cell">Key</Th>
          <Th>Status</Th>
          <Th className="hidden md:table-cell">Created</Th>
          <Th className="hidden md:table-cell">Last used</Th>
          <Th className="hidden lg:table-cell">Max price</Th>
          <Th>Spent</Th>
          <Th>
            <span className="sr-only">Actions</span>
          </Th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => {
          const s = status(key);
          return (
            <tr key={key.id} className={key.revoked_at ? "text-zinc-400" : undefined}>
              <Td className="max-w-32 truncate font-medium sm:max-w-48">{key.name}</Td>
              <Td className="hidden font-mono text-xs sm:table-cell">{key.prefix}…</Td>
              <Td>
                <Badge tone={s.tone}>{s.label}</Badge>
              </Td>
              <Td className="hidden md:table-cell">{formatDateTime(key.created_at)}</Td>
              <Td className="hidden md:table-cell">{key.last_used_at ? formatDateTime(key.last_used_at) : "Never"}</Td>
              <Td className="hidden tabular-nums lg:table-cell">{key.max_price_cents === null ? "Account default" : `${formatCents(key.max_price_cents)} / diem`}</Td>
              <Td className="tabular-nums">
                {formatUsd(key.spent)}
                {key.spend_limit !== null && <span className="text-zinc-400"> of {formatUsd(key.spend_limit)}</span>}
              </Td>
              <Td className="text-right">
                {!key.revoked_at && (
                  <Button variant="ghost" size="sm" className="text-red-700 dark:text-red-300" aria-label={`Revoke ${key.name}`} onClick={() => onRevoke(key)}>
                    Revoke
                  </Button>
                )}
              </Td>
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}

function CreateKeyDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (key: CreatedApiKey) => void }) {
  const settings = useSettings();
  const [name, setName] = useState("");
  const [maxPrice, setMaxPrice] = useState("");
  const spendLimit = useUsdcAmount("", { minMicros: 1n }, { optional: true });
  const { mutation: create, close } = useListMutation({
    mutationFn: () =>
      api<CreatedApiKey>("/v1/account/api-keys", {
        method: "POST",
        body: {
          ...(name.trim() && { name: name.trim() }),
          ...(maxPrice && { max_price_cents: Number(maxPrice) }),
          ...(spendLimit.value && { spend_limit: spendLimit.value }),
        },
      }),
    invalidates: [apiKeysKey],
    onSuccess: (key) => {
      setName("");
      setMaxPrice("");
      spendLimit.clear();
      onCreated(key);
    },
    onClose,
  });
  const maxPriceError = maxPrice ? priceCentsProblem(maxPrice) : null;

  function submit(event: FormEvent) {
    event.preventDefault();
    spendLimit.touch();
    if (maxPriceError || spendLimit.problem) return;
    create.mutate();
  }

  return (
    <Dialog open={open} onClose={close} title="Create an API key" description="The key is shown once, right after you create it.">
      <form onSubmit={submit} className="flex flex-col gap-4" noValidate>
        <Field label="Name" name="name" placeholder="e.g. production agent" maxLength={100} value={name} onChange={(e) => setName(e.target.value)} autoFocus />
        <div className="grid gap-4 sm:grid-cols-2">
          <Field
            label="Max price (optional)"
            name="max_price_cents"
            inputMode="numeric"
            placeholder={String(settings.platformDefaultMaxPriceCents)}
            suffix="¢ / diem"
            value={maxPrice}
            onChange={(e) => setMaxPrice(e.target.value.trim())}
            error={maxPriceError}
            hint="The most this key pays per diem. Empty: your account default."
          />
          <UsdcAmountField amount={spendLimit} label="Spend limit (optional)" name="spend_limit" placeholder="No limit" hint="Total this key may ever spend." />
        </div>
        <DialogActions error={create.error} onCancel={close}>
          <Button type="submit" loading={create.isPending}>
            Create key
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}

function RevealKeyDialog({ created, onClose }: { created: CreatedApiKey | null; onClose: () => void }) {
  return (
    <Dialog open={created !== null} onClose={onClose} title="Your new API key">
      {created && (
        <>
          <Alert tone="warning" title="Copy it now: you won't see it again">
            svc stores only a hash of the key. Keep it somewhere safe, like a password; if it leaks, revoke it and create another.
          </Alert>
          <div className="flex flex-col gap-2 sm:flex-row">
            <input readOnly aria-label="API key" value={created.key} className={`${inputClass} font-mono text-xs`} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton value={created.key} label="Copy API key" size="md" />
          </div>
          <p className="text-sm text-zinc-500 dark:text-zinc-400">
            Named <strong>{created.name}</strong>
            {created.max_price_cents !== null && <> · max {formatCents(created.max_price_cents)} / diem</>}
            {created.spend_limit !== null && <> · spend limit {formatUsd(created.spend_limit)}</>}
          </p>
          <div className="flex justify-end">
            <Button onClick={onClose}>I&apos;ve saved my key</Button>
          </div>
        </>
      )}
    </Dialog>
  );
}

function RevokeKeyDialog({ apiKey, onClose }: { apiKey: ApiKeyView | null; onClose: () => void }) {
  const { mutation: revoke, close } = useListMutation({
    mutationFn: (id: string) => api<ApiKeyView>(`/v1/account/api-keys/${id}`, { method: "DELETE" }),
    invalidates: [apiKeysKey],
    onClose,
  });
  return (
    <Dialog
      open={apiKey !== null}
      onClose={close}
      title={apiKey ? `Revoke “${apiKey.name}”?` : "Revoke key?"}
      description={apiKey && <>Requests with <span className="font-mono">{apiKey.prefix}…</span> will be refused from now on. This can&apos;t be undone.</>}
    >
      <DialogActions error={revoke.error} onCancel={close}>
        <Button variant="danger" loading={revoke.isPending} onClick={() => apiKey && revoke.mutate(apiKey.id)}>
          Revoke key
        </Button>
      </DialogActions>
    </Dialog>
  );
}
