/** Each command: call it, then print its result as text or (--json) as one JSON document. */
import type { Context } from "./api";
import { chat, getGeneration, resolveApiKey, type ChatResult } from "./chat";
import { CliError, EXIT } from "./errors";
import {
  createKey,
  currentKey,
  describeKeyLimits,
  editKey,
  formatCurrentKey,
  formatKeyTable,
  getBalance,
  keyStatus,
  listKeys,
  revokeKey,
} from "./keys";
import { login } from "./login";
import { usd, type Output } from "./output";
import { runFlow } from "./run";
import { topUp } from "./topup";

export type Values = {
  name?: string;
  "max-cents"?: string;
  "spend-limit"?: string;
  "limit-reset"?: string;
  model?: string;
  "max-tokens"?: string;
  prompt?: string;
  "api-key"?: string;
  "min-balance"?: string;
  "topup-amount"?: string;
  "key-limit"?: string;
  responses?: boolean;
  stream?: boolean;
  sort?: string;
  only?: string;
};

export const DEFAULT_RUN_PROMPT = "In one short sentence: what is an inference marketplace?";

export async function runCommand(ctx: Context, out: Output, args: string[], v: Values): Promise<void> {
  const [command, ...rest] = args;
  switch (command) {
    case "login": {
      const r = await login(ctx, out.note);
      return out.result(
        `Signed in as ${r.address} to ${r.base_url} until ${r.expires_at}.\nSession saved in ${r.session_file} (owner-only).`,
        r,
      );
    }
    case "topup": {
      const r = await topUp(ctx, rest[0] ?? "", out.note);
      return out.result(
        `Topped up ${usd(r.credited)} USDC from ${r.payer} (tx ${r.transaction}).\nBalance: ${usd(r.balance)} USDC available.`,
        r,
      );
    }
    case "balance": {
      const b = await getBalance(ctx);
      const address = ctx.store.get(ctx.config.baseUrl)?.address;
      return out.result(
        `${usd(b.available)} USDC available (held ${usd(b.held)}, total ${usd(b.total)}) for ${address} on ${ctx.config.baseUrl}.`,
        { ...b, address },
      );
    }
    case "keys":
      return keysCommand(ctx, out, rest, v);
    case "key": {
      const k = await currentKey(ctx, resolveApiKey(ctx, v["api-key"]));
      return out.result(formatCurrentKey(k), k);
    }
    case "chat": {
      const prompt = v.prompt ?? rest.join(" ");
      const r = await chat(ctx, {
        prompt,
        model: v.model,
        maxCents: v["max-cents"],
        maxTokens: v["max-tokens"],
        apiKey: v["api-key"],
        responses: v.responses,
        stream: v.stream,
        // Streamed text goes to the terminal as it arrives; --json prints one document at the end instead.
        onText: out.json ? undefined : (text) => process.stdout.write(text),
        sort: v.sort,
        only: v.only,
      });
      return out.result(v.stream && !out.json ? `\n\n${costLine(r)}` : `${r.answer}\n\n${costLine(r)}`, r);
    }
    case "generation": {
      const g = await getGeneration(ctx, rest[0], v["api-key"]);
      const d = g.usage.cost_details;
      const claimed =
        d.claimed_prompt_tokens === null ? "no claim (svc counted)" : `claimed ${d.claimed_prompt_tokens}+${d.claimed_completion_tokens}`;
      return out.result(
        [
          `${g.id} · ${g.created_at} · ${g.model} · finish ${g.finish_reason ?? "?"}`,
          `cost ${d.charge} USDC (supplier ${d.supplier_share}, fee ${d.platform_fee}) · price ${d.price_cents_per_diem} cents/diem · burn ${d.burn} diem`,
          `tokens billed ${d.billed_prompt_tokens}+${d.billed_completion_tokens}, ${claimed}${d.usage_disputed ? " · DISPUTED" : ""}`,
          `offer ${g.offer_id} · supplier ${g.supplier_id} · key ${g.key.name} (${g.key.prefix}…) · latency ${g.upstream_latency_ms} ms upstream, ${g.total_latency_ms ?? "?"} ms total`,
          `journal entry ${g.journal_entry_id}`,
        ].join("\n"),
        g,
      );
    }
    case "run": {
      const r = await runFlow(
        ctx,
        {
          prompt: v.prompt ?? (rest.join(" ") || DEFAULT_RUN_PROMPT),
          model: v.model,
          maxCents: v["max-cents"],
          maxTokens: v["max-tokens"] ?? "128",
          minBalance: v["min-balance"] ?? "1.00",
          topUpAmount: v["topup-amount"] ?? "5.00",
          keyLimit: v["key-limit"] ?? "1.00",
        },
        out.note,
      );
      const human = [
        r.completion.answer,
        "",
        costLine(r.completion),
        r.key.reused
          ? `API key ${r.key.prefix}… (id ${r.key.id}; the one saved in ${ctx.store.file})`
          : `API key ${r.key.key} (id ${r.key.id}; shown once, saved in ${ctx.store.file} for \`chat\` and the next \`run\`)`,
      ].join("\n");
      return out.result(human, r);
    }
    default:
      throw new CliError(command ? `Unknown command "${command}". See --help.` : "No command. See --help.", EXIT.usage, "usage");
  }
}

async function keysCommand(ctx: Context, out: Output, [sub, id]: string[], v: Values): Promise<void> {
  switch (sub) {
    case "create": {
      const k = await createKey(ctx, keyOptions(v));
      return out.result(
        `${k.key}\nCreated key "${k.name}" (id ${k.id}; ${describeKeyLimits(k)}).\nThe key is shown only once; it is saved in ${ctx.store.file} for \`chat\`.`,
        k,
      );
    }
    case "list": {
      const keys = await listKeys(ctx);
      return out.result(formatKeyTable(keys), { data: keys });
    }
    case "edit": {
      const k = await editKey(ctx, id, keyOptions(v));
      return out.result(`Key "${k.name}" (${k.prefix}…, id ${k.id}): ${describeKeyLimits(k)}.`, k);
    }
    case "revoke": {
      const k = await revokeKey(ctx, id);
      return out.result(`Key ${k.prefix}… (${k.id}) is ${keyStatus(k)}; it is refused from the next request on.`, k);
    }
    default:
      throw new CliError(
        "Usage: keys create [--name N] [--max-cents C] [--spend-limit USD] [--limit-reset daily|weekly|monthly] | keys list | " +
          "keys edit <id> [--name N] [--max-cents C|none] [--spend-limit USD|none] [--limit-reset daily|weekly|monthly|none] | keys revoke <id>",
        EXIT.usage,
        "usage",
      );
  }
}

function keyOptions(v: Values) {
  return { name: v.name, maxCents: v["max-cents"], spendLimit: v["spend-limit"], limitReset: v["limit-reset"] };
}

export function costLine(r: ChatResult): string {
  return [
    `cost ${r.cost ?? "?"} USDC`,
    `price ${r.price_cents ?? "?"} cents/diem (max ${r.max_cents ?? "?"})`,
    `burn ${r.burn_diem ?? "?"} diem`,
    `balance ${r.balance_remaining ?? "?"} USDC`,
    `${r.model}, ${r.usage.prompt_tokens}+${r.usage.completion_tokens} tokens`,
    `generation ${r.generation_id ?? r.id}`,
  ].join(" · ");
}
