/** Buyers with real balances and keys, and an OpenAI client wired to the real route handler. */
import OpenAI from "openai";
import { POST as chatCompletions } from "@/app/v1/chat/completions/route";
import { createApiKey } from "@/lib/auth/api-keys";
import type { CreateApiKeyInput } from "@/lib/auth/schemas";
import { db } from "@/lib/db/client";
import { seedAccount } from "./factories";
import { seedBuyerBalance } from "./ledger-factories";

/** A buyer holding `balanceMicros` with one API key. */
export async function seedBuyer(balanceMicros: bigint, key: CreateApiKeyInput = {}) {
  const account = await seedAccount();
  if (balanceMicros > 0n) await seedBuyerBalance(account.id, balanceMicros);
  const apiKey = await createApiKey(account.id, key);
  return { ...account, key: apiKey.key, apiKeyId: apiKey.id };
}

export async function buyerBalance(accountId: string) {
  const row = await db.ledgerAccount.findUnique({ where: { kind_ownerId: { kind: "buyer", ownerId: accountId } } });
  return { balance: row?.balanceMicros ?? 0n, held: row?.heldMicros ?? 0n };
}

/** Calls POST /v1/chat/completions through the real handler, as an HTTP client would. */
export function callCompletions(key: string | null, body: unknown, headers: Record<string, string> = {}) {
  return chatCompletions(
    new Request("http://localhost:3000/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
      body: JSON.stringify(body),
    }),
  );
}

/** The official OpenAI client, pointed at the service's /v1, its HTTP requests served by the route handler. */
export function openaiClient(key: string, defaultHeaders: Record<string, string> = {}) {
  return new OpenAI({
    baseURL: "http://localhost:3000/v1",
    apiKey: key,
    maxRetries: 0,
    defaultHeaders,
    fetch: async (url, init) => {
      const req = new Request(url, init);
      if (new URL(req.url).pathname !== "/v1/chat/completions") throw new Error(`unexpected ${req.method} ${req.url}`);
      return chatCompletions(req);
    },
  });
}
