"use client";

import { useEffect, useRef, useState, type FormEvent } from "react";
import { KeyFields, useKeyDraft } from "@/components/buyer/key-fields";
import { apiKeysKey, useApiKeys, useRefusals, type ApiKeyView, type CreatedApiKey } from "@/components/buyer/queries";
import { KeyRefusalsNote } from "@/components/buyer/refusals-panel";
import { Alert } from "@/components/ui/alert";
import { Amount } from "@/components/ui/amount";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { Dialog, DialogActions } from "@/components/ui/dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { cn } from "@/components/ui/cn";
import { inputClass } from "@/components/ui/field";
import { formatDateTime, formatPricePerDiem, formatUsd, microsOf } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { RowCard, Table, Td, Th } from "@/components/ui/table";
import { useListMutation } from "@/components/ui/use-list-mutation";
import { useSettings } from "@/components/wallet/providers";
import { api } from "@/lib/browser/api";
import { API_KEY_NAME_MAX, type LimitReset } from "@/lib/auth/schemas";
import { parseMicros } from "@/lib/money";

export function ApiKeys() {
  const keys = useApiKeys();
  const [createOpen, setCreateOpen] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKeyView | null>(null);
  const [editing, setEditing] = useState<ApiKeyView | null>(null);

  return (
    <Panel
      title="API keys"
      description="Bearer keys for POST /v1/chat/completions. Each key can carry its own max price and spend limit, for good or reset daily, weekly or monthly (UTC)."
      actions={<Button onClick={() => setCreateOpen(true)}>Create key</Button>}
    >
      <QueryState query={keys} loadingLabel="Loading your API keys" errorTitle="Couldn't load your API keys">
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No API keys yet" action={<Button onClick={() => setCreateOpen(true)}>Create your first key</Button>}>
              Create a key to call svc from code, with the OpenAI SDK or curl.
            </EmptyState>
          ) : (
            <KeysTable keys={data} onRevoke={setRevoking} onEdit={setEditing} />
          )
        }
      </QueryState>
      <CreateKeyDialog open={createOpen} onClose={() => setCreateOpen(false)} onCreated={setCreated} />
      <RevealKeyDialog created={created} onClose={() => setCreated(null)} />
      <RevokeKeyDialog apiKey={revoking} onClose={() => setRevoking(null)} />
      <EditKeyDialog apiKey={editing} onClose={() => setEditing(null)} />
    </Panel>
  );
}

/**
 * What the key can do now. A key whose spend reached its limit is refused (402 spend_limit_exceeded) until the period
 * resets or the limit is raised: it says so, with the reset, instead of looking Active.
 */
export function keyStatus(key: ApiKeyView): { label: string; tone: "green" | "neutral" | "amber"; detail: string | null } {
  if (key.revoked_at) return { label: "Revoked", tone: "neutral", detail: null };
  if (key.expires_at && new Date(key.expires_at) <= new Date()) return { label: "Expired", tone: "amber", detail: null };
  if (key.spend_limit !== null && microsOf(key.period_spent ?? key.spent) >= microsOf(key.spend_limit)) {
    return {
      label: "Limit reached",
      tone: "amber",
      detail: key.limit_resets_at ? `resets ${formatDateTime(key.limit_resets_at)}` : "raise the limit to use it again",
    };
  }
  return { label: "Active", tone: "green", detail: null };
}

function KeyStatus({ apiKey, align = "start" }: { apiKey: ApiKeyView; align?: "start" | "end" }) {
  const s = keyStatus(apiKey);
  return (
    <span className={cn("flex flex-col gap-0.5", align === "end" ? "items-end" : "items-start")}>
      <Badge tone={s.tone}>{s.label}</Badge>
      {s.detail && <span className="text-xs whitespace-normal text-zinc-600 dark:text-zinc-400">{s.detail}</span>}
    </span>
  );
}

/** A key's max price as its column and card say it. */
function maxPriceText(key: ApiKeyView): string {
  return key.max_price_cents === null ? "Account default" : formatPricePerDiem(key.max_price_cents);
}

/** Edit and Revoke for a live key, each naming the key; a revoked key has none. */
function KeyActions({
  apiKey: key,
  onRevoke,
  onEdit,
}: {
  apiKey: ApiKeyView;
  onRevoke: (key: ApiKeyView) => void;
  onEdit: (key: ApiKeyView) => void;
}) {
  if (key.revoked_at) return null;
  return (
    <>
      <Button
        variant="ghost"
        size="sm"
        aria-label={`Edit ${key.name} (${key.prefix}…)`}
        title={`Edit ${key.name}`}
        onClick={() => onEdit(key)}
      >
        Edit
      </Button>
      <Button
        variant="ghost"
        size="sm"
        className="text-red-700 dark:text-red-300"
        aria-label={`Revoke ${key.name} (${key.prefix}…)`}
        title={`Revoke ${key.name}`}
        onClick={() => onRevoke(key)}
      >
        Revoke
      </Button>
    </>
  );
}

/**
 * Every column at a desktop width, narrow enough that Edit and Revoke stay in view from 1280 px up (the key's prefix
 * under its name, created and last used in one column, long figures wrapping); below that it scrolls sideways inside
 * its box, nothing pinned over it. One card per key on a phone, its status and spend always in view, its name whole,
 * and a revoked key greyed and dashed.
 */
function KeysTable({
  keys,
  onRevoke,
  onEdit,
}: {
  keys: ApiKeyView[];
  onRevoke: (key: ApiKeyView) => void;
  onEdit: (key: ApiKeyView) => void;
}) {
  // What each key was refused in the last 24 hours (a link to the Usage page's list); the keys show without it.
  const refusals = useRefusals().data;
  const refusedOf = (key: ApiKeyView) => refusals?.by_key.find((entry) => entry.key.id === key.id);
  return (
    <Table
      caption="API keys"
      cards={keys.map((key) => {
        return (
          <RowCard
            key={key.id}
            title={key.name}
            titleText={key.name}
            wrapTitle
            subtitle={<span className="font-mono">{key.prefix}…</span>}
            status={
              <span className="flex flex-col items-end gap-1">
                <KeyStatus apiKey={key} align="end" />
                <KeyRefusalsNote entry={refusedOf(key)} />
              </span>
            }
            amount={<KeySpend apiKey={key} compact />}
            muted={key.revoked_at !== null}
            facts={[
              { label: "Max price", value: maxPriceText(key) },
              { label: "Last used", value: key.last_used_at ? formatDateTime(key.last_used_at) : "Never" },
              { label: key.revoked_at ? "Revoked on" : "Created", value: formatDateTime(key.revoked_at ?? key.created_at) },
              ...(key.limit_resets_at && !key.revoked_at ? [{ label: "Limit resets", value: formatDateTime(key.limit_resets_at) }] : []),
            ]}
            actions={key.revoked_at ? undefined : <KeyActions apiKey={key} onRevoke={onRevoke} onEdit={onEdit} />}
          />
        );
      })}
    >
      <thead>
        <tr>
          <Th>Key</Th>
          <Th>Status</Th>
          <Th>Created · last used</Th>
          <Th>Max price</Th>
          <Th>Spent</Th>
          <Th>
            <span className="sr-only">Actions</span>
          </Th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => {
          return (
            <tr key={key.id} className={key.revoked_at ? "text-zinc-600 dark:text-zinc-400" : undefined}>
              <Td className="max-w-48" title={key.name}>
                <span className="block truncate font-medium">{key.name}</span>
                <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{key.prefix}…</span>
              </Td>
              <Td className="max-w-44">
                <span className="flex flex-col items-start gap-1">
                  <KeyStatus apiKey={key} />
                  <KeyRefusalsNote entry={refusedOf(key)} />
                </span>
              </Td>
              <Td className="text-xs">
                <span className="block">{formatDateTime(key.created_at)}</span>
                <span className="text-zinc-600 dark:text-zinc-400">
                  {key.last_used_at ? `used ${formatDateTime(key.last_used_at)}` : "never used"}
                </span>
              </Td>
              <Td className="tabular-nums">{maxPriceText(key)}</Td>
              <Td className="min-w-40 tabular-nums">
                <div className="whitespace-normal">
                  <KeySpend apiKey={key} />
                </div>
              </Td>
              <Td className="text-right whitespace-nowrap">
                <KeyActions apiKey={key} onRevoke={onRevoke} onEdit={onEdit} />
              </Td>
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}

const PERIOD_WORD: Record<LimitReset, string> = { daily: "today", weekly: "this week", monthly: "this month" };
const PERIOD_UNIT: Record<LimitReset, string> = { daily: "UTC day", weekly: "week (from Monday, UTC)", monthly: "calendar month (UTC)" };

/**
 * What the key spent against its limit: its lifetime spend, or the current period's (requests in flight included,
 * as the limit counts them) with when the period resets.
 */
function KeySpend({ apiKey: key, compact = false }: { apiKey: ApiKeyView; compact?: boolean }) {
  const limit = key.spend_limit !== null && (
    <span className="font-normal text-zinc-600 dark:text-zinc-400">
      {" "}
      of <Amount value={key.spend_limit} />
    </span>
  );
  if (key.limit_reset === null || key.period_spent === null) {
    return (
      <>
        <Amount value={key.spent} />
        {limit}
      </>
    );
  }
  return (
    <div className={cn("flex flex-col", compact && "items-end")}>
      <span>
        <Amount value={key.period_spent} /> {PERIOD_WORD[key.limit_reset]}
        {limit}
      </span>
      <span className="text-xs font-normal text-zinc-600 dark:text-zinc-400">
        {key.limit_resets_at && !compact && <>Resets {formatDateTime(key.limit_resets_at)} · </>}
        <Amount value={key.spent} /> in all
      </span>
    </div>
  );
}

/** A name no existing key has: "key-3" for a third key (the API's own default, "default", repeats). */
export function suggestKeyName(keys: { name: string }[]): string {
  const taken = new Set(keys.map((k) => k.name));
  let n = keys.length + 1;
  while (taken.has(`key-${n}`)) n++;
  return `key-${n}`;
}

function CreateKeyDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (key: CreatedApiKey) => void }) {
  const settings = useSettings();
  const keys = useApiKeys();
  const draft = useKeyDraft(null);
  const [nameTouched, setNameTouched] = useState(false);
  const suggested = suggestKeyName(keys.data?.data ?? []);
  // Prefill a distinct name each time the dialog opens (never the API's repeating "default").
  useEffect(() => {
    if (open) {
      draft.setName((current) => current || suggested);
      setNameTouched(false);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only when it opens
  }, [open]);
  const { mutation: create, close } = useListMutation({
    mutationFn: () =>
      api<CreatedApiKey>("/v1/account/api-keys", {
        method: "POST",
        body: {
          name: draft.name.trim(),
          ...(draft.maxPrice.value && { max_price_cents: Number(draft.maxPrice.value) }),
          ...(draft.spendLimit.value && { spend_limit: draft.spendLimit.value }),
          ...(draft.limitReset && { limit_reset: draft.limitReset }),
        },
      }),
    invalidates: [apiKeysKey],
    onSuccess: (key) => {
      draft.clear();
      onCreated(key);
    },
    onClose,
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    setNameTouched(true);
    if (draft.check()) create.mutate();
  }

  return (
    <Dialog open={open} onClose={close} title="Create an API key" description="The key is shown once, right after you create it.">
      <form onSubmit={submit} className="flex flex-col gap-4" noValidate>
        <KeyFields
          draft={draft}
          nameField={{
            placeholder: suggested,
            onBlur: () => setNameTouched(true),
            error: nameTouched ? draft.nameProblem : null,
            hint: `To tell your keys apart (at most ${API_KEY_NAME_MAX} characters, ${draft.name.trim().length} used).`,
            autoFocus: true,
          }}
          maxPriceField={{
            placeholder: String(settings.platformDefaultMaxPriceCents),
            hint: "The most this key pays per diem. Empty: your account default.",
          }}
          spendLimitHint={
            draft.limitReset ? `What this key may spend each ${PERIOD_UNIT[draft.limitReset]}.` : "Total this key may ever spend."
          }
        />
        <DialogActions error={create.error} onCancel={close}>
          <Button type="submit" loading={create.isPending}>
            Create key
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}

/**
 * The shown-once key. Escape or a click outside does not lose it silently: unless it was copied, the dialog
 * asks first ("Close without copying?").
 */
function RevealKeyDialog({ created, onClose }: { created: CreatedApiKey | null; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const keepRef = useRef<HTMLButtonElement>(null);
  const done = () => {
    setCopied(false);
    setConfirming(false);
    onClose();
  };
  useEffect(() => {
    if (confirming) keepRef.current?.focus();
  }, [confirming]);
  return (
    <Dialog open={created !== null} onClose={done} onDismiss={() => (copied ? done() : setConfirming(true))} title="Your new API key">
      {created && (
        <>
          <Alert tone="warning" title="Copy it now: you won't see it again">
            svc stores only a hash of the key. Keep it somewhere safe, like a password; if it leaks, revoke it and create another.
          </Alert>
          <div className="flex flex-col gap-2 sm:flex-row">
            <input
              readOnly
              aria-label="API key"
              value={created.key}
              className={`${inputClass} font-mono text-xs`}
              onFocus={(e) => e.currentTarget.select()}
            />
            <CopyButton value={created.key} label="Copy API key" size="md" onCopied={() => setCopied(true)} />
          </div>
          <p className="text-sm break-words text-zinc-600 dark:text-zinc-400">
            Named <strong>{created.name}</strong>
            {created.max_price_cents !== null && <> · max {formatPricePerDiem(created.max_price_cents)}</>}
            {created.spend_limit !== null && (
              <>
                {" "}
                · spend limit {formatUsd(created.spend_limit)}
                {created.limit_reset && <> {created.limit_reset}</>}
              </>
            )}
          </p>
          {confirming ? (
            <Alert
              tone="error"
              title="Close without copying the key?"
              actions={
                <>
                  <Button ref={keepRef} variant="secondary" size="sm" onClick={() => setConfirming(false)}>
                    Keep it open
                  </Button>
                  <Button variant="danger" size="sm" onClick={done}>
                    Close anyway
                  </Button>
                </>
              }
            >
              It is not stored anywhere you can see it again; you would have to create another key.
            </Alert>
          ) : (
            <div className="flex justify-end">
              <Button onClick={done}>I&apos;ve saved my key</Button>
            </div>
          )}
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
      description={
        apiKey && (
          <>
            Requests with <span className="font-mono">{apiKey.prefix}…</span> will be refused from now on. This can&apos;t be undone.
          </>
        )
      }
    >
      <DialogActions error={revoke.error} onCancel={close}>
        <Button variant="danger" loading={revoke.isPending} onClick={() => apiKey && revoke.mutate(apiKey.id)}>
          Revoke key
        </Button>
      </DialogActions>
    </Dialog>
  );
}

/**
 * Edits a live key: name, max price, spend limit and its reset. Only what changed is sent. A limit below what the
 * period has already spent is accepted (the API says so): the key is then refused until the reset.
 */
function EditKeyDialog({ apiKey, onClose }: { apiKey: ApiKeyView | null; onClose: () => void }) {
  // A fresh form per key (its fields start from that key's values).
  return apiKey === null ? null : <EditKeyForm key={apiKey.id} apiKey={apiKey} onClose={onClose} />;
}

function EditKeyForm({ apiKey, onClose }: { apiKey: ApiKeyView; onClose: () => void }) {
  const draft = useKeyDraft(apiKey);
  const { mutation: save, close } = useListMutation({
    mutationFn: () =>
      api<ApiKeyView>(`/v1/account/api-keys/${apiKey.id}`, {
        method: "PATCH",
        body: {
          ...(draft.name.trim() !== apiKey.name && { name: draft.name.trim() }),
          ...(draft.maxPrice.value !== (apiKey.max_price_cents === null ? "" : String(apiKey.max_price_cents)) && {
            max_price_cents: draft.maxPrice.value ? Number(draft.maxPrice.value) : null,
          }),
          ...(draft.spendLimit.micros !== (apiKey.spend_limit === null ? null : parseMicros(apiKey.spend_limit)) && {
            spend_limit: draft.spendLimit.value || null,
          }),
          ...(draft.limitReset !== apiKey.limit_reset && { limit_reset: draft.limitReset }),
        },
      }),
    invalidates: [apiKeysKey],
    onClose,
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    if (draft.check()) save.mutate();
  }

  return (
    <Dialog open onClose={close} title={`Edit “${apiKey.name}”`} description={<span className="font-mono">{apiKey.prefix}…</span>}>
      <form onSubmit={submit} className="flex flex-col gap-4" noValidate>
        <KeyFields
          draft={draft}
          maxPriceField={{ hint: "Empty: your account default." }}
          spendLimitHint={
            apiKey.period_spent !== null && apiKey.limit_reset
              ? `${formatUsd(apiKey.period_spent)} spent ${PERIOD_WORD[apiKey.limit_reset]}. A limit below that stops the key until the reset.`
              : `${formatUsd(apiKey.spent)} spent so far. A limit below that stops the key.`
          }
        />
        <DialogActions error={save.error} onCancel={close}>
          <Button type="submit" loading={save.isPending}>
            Save
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
