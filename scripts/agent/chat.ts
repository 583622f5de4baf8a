/**
 * chat: one completion through the official openai client pointed at {base}/v1, with what it cost (usage.cost_details,
 * the clear's own journal figures) and its generation id; `generation <id>` reads a completion's record afterwards.
 * `chat --responses` asks the same through POST /v1/responses (the Responses API agents' frameworks speak): the same
 * result, with the response's id (resp_…) and its status in place of the finish reason.
 */
import OpenAI from "openai";
import type { CostDetails, Generation } from "../../lib/router/schemas";
import { callApi, type Context } from "./api";
import { ApiError, CliError, EXIT, explainApiError } from "./errors";
import { parseCents } from "./keys";

export type ChatOptions = {
  prompt: string;
  model?: string;
  maxCents?: string;
  maxTokens?: string;
  apiKey?: string;
  /** Through POST /v1/responses rather than /v1/chat/completions. */
  responses?: boolean;
  /** Stream the answer through /v2 (stream: true), each piece of text handed to onText as it arrives. */
  stream?: boolean;
  onText?: (text: string) => void;
  /** provider.sort: price, latency, throughput or quality (the server checks it). */
  sort?: string;
  /** provider.only: offer ids or supplier ids (sup_…), comma-separated. */
  only?: string;
};

export type ChatResult = {
  /** Which API answered: POST /v1/chat/completions or POST /v1/responses. */
  api: "chat.completions" | "responses";
  /** The completion's id (chatcmpl-…), or the response's (resp_…); its record is GET /v1/generations/{generation_id}. */
  id: string;
  generation_id: string | null;
  model: string;
  answer: string;
  /** The chat's finish reason; through the Responses API its status (completed, or incomplete: and why). */
  finish_reason: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /** USDC this completion cost (usage.cost_details.charge, = X-Svc-Cost). */
  cost: string | null;
  /** The clear's figures: charge, supplier share, platform fee, burn, price, billed and claimed tokens. */
  cost_details: CostDetails | null;
  /** The serving offer's price, cents per diem (X-Svc-Price-Cents). */
  price_cents: number | null;
  /** Capacity burned, diem (X-Svc-Burn-Diem). */
  burn_diem: string | null;
  /** The max price it was routed under (X-Svc-Max-Cents). */
  max_cents: number | null;
  /** Balance after the clear, USDC (X-Balance-Remaining). */
  balance_remaining: string | null;
  request_id: string | null;
};

/** The request's provider object from --sort and --only; undefined when neither is given. */
function providerOf(options: ChatOptions): { sort?: string; only?: string[] } | undefined {
  const only = options.only
    ?.split(",")
    .map((id) => id.trim())
    .filter((id) => id !== "");
  if (options.sort === undefined && (only === undefined || only.length === 0)) return undefined;
  return { ...(options.sort !== undefined && { sort: options.sort }), ...(only && only.length > 0 && { only }) };
}

type ModelListing = { id: string; best_price_cents: number | null };

/** The model to use: the one asked for, else the cheapest one someone sells right now. */
export async function pickModel(ctx: Context, wanted: string | undefined): Promise<string> {
  if (wanted) return wanted;
  const { data } = await callApi<{ data: ModelListing[] }>(ctx, "/v1/models");
  const offered = data.data.filter((m) => m.best_price_cents !== null).sort((a, b) => a.best_price_cents! - b.best_price_cents!);
  if (offered.length === 0) {
    throw new CliError(
      "No model has an offer on the market right now; pass --model <id> (see GET /v1/models).",
      EXIT.unavailable,
      "no_model_offered",
    );
  }
  return offered[0].id;
}

/** The API key: --api-key, else SVC_API_KEY, else the last key `keys create` (or `run`) saved for this base URL. */
export function resolveApiKey(ctx: Context, flag: string | undefined): string {
  const key = flag ?? ctx.env.SVC_API_KEY ?? ctx.store.get(ctx.config.baseUrl)?.apiKey?.key;
  if (!key) {
    throw new CliError(
      "No API key: pass --api-key, set SVC_API_KEY, or create one with `npm run agent -- keys create`.",
      EXIT.auth,
      "api_key_missing",
    );
  }
  return key;
}

export async function chat(ctx: Context, options: ChatOptions): Promise<ChatResult> {
  if (!options.prompt.trim()) throw new CliError('chat needs a prompt: npm run agent -- chat "Hello"', EXIT.usage, "missing_prompt");
  const maxCents = parseCents(options.maxCents, "--max-cents");
  const maxTokens = options.maxTokens === undefined ? undefined : Number(options.maxTokens);
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 1)) {
    throw new CliError(
      `--max-tokens must be a positive integer, got ${JSON.stringify(options.maxTokens)}.`,
      EXIT.usage,
      "invalid_max_tokens",
    );
  }
  const apiKey = resolveApiKey(ctx, options.apiKey);
  const model = await pickModel(ctx, options.model);
  const provider = providerOf(options);

  // One call is one request: a retry could route elsewhere at another price, so the SDK must not retry on its own.
  const version = options.stream ? "v2" : "v1";
  const client = new OpenAI({ baseURL: `${ctx.config.baseUrl}/${version}`, apiKey, maxRetries: 0, timeout: 180_000 });
  const headers = maxCents === undefined ? undefined : { headers: { "X-Svc-Max-Cents": String(maxCents) } };
  try {
    if (options.stream && !options.responses) {
      const { data: stream, response } = await client.chat.completions
        .create(
          {
            model,
            messages: [{ role: "user", content: options.prompt }],
            ...(maxTokens ? { max_tokens: maxTokens } : {}),
            ...(provider && ({ provider } as object)),
            stream: true,
            stream_options: { include_usage: true },
          } as OpenAI.ChatCompletionCreateParamsStreaming,
          headers,
        )
        .withResponse();
      let answer = "";
      let finish = "";
      let id = "";
      type StreamUsage = OpenAI.CompletionUsage & { cost_details?: CostDetails; balance_remaining?: string };
      let usage: StreamUsage | null = null;
      for await (const chunk of stream) {
        id = chunk.id;
        const text = chunk.choices[0]?.delta.content ?? "";
        answer += text;
        if (text) options.onText?.(text);
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage as StreamUsage;
      }
      const result = withHeaders(response.headers, {
        api: "chat.completions",
        id,
        model,
        answer,
        finish_reason: finish,
        usage: {
          prompt_tokens: usage?.prompt_tokens ?? 0,
          completion_tokens: usage?.completion_tokens ?? 0,
          total_tokens: usage?.total_tokens ?? 0,
        },
        cost_details: usage?.cost_details ?? null,
      });
      // A stream's headers went out before its clear: its cost, burn and balance come in the usage chunk.
      return {
        ...result,
        burn_diem: usage?.cost_details?.burn ?? null,
        balance_remaining: usage?.balance_remaining ?? null,
      };
    }
    if (options.stream) {
      const { data: events, response } = await client.responses
        .create(
          {
            model,
            input: options.prompt,
            ...(maxTokens ? { max_output_tokens: maxTokens } : {}),
            ...(provider && ({ provider } as object)),
            stream: true,
          } as OpenAI.Responses.ResponseCreateParamsStreaming,
          headers,
        )
        .withResponse();
      let data: OpenAI.Responses.Response | null = null;
      for await (const event of events) {
        if (event.type === "response.output_text.delta") options.onText?.(event.delta);
        if (event.type === "response.completed" || event.type === "response.incomplete" || event.type === "response.failed")
          data = event.response;
      }
      if (!data) throw new CliError("The stream ended without its response.", EXIT.failure, "stream_incomplete");
      if (data.status === "failed")
        throw new CliError(`The stream failed: ${data.error?.message ?? "upstream error"}`, EXIT.failure, "stream_failed");
      // A stream's headers went out before its clear: its burn and balance come in the terminal usage.
      const usage = data.usage as { cost_details?: CostDetails; balance_remaining?: string } | undefined;
      const result = responsesResult(response.headers, data);
      return { ...result, burn_diem: usage?.cost_details?.burn ?? null, balance_remaining: usage?.balance_remaining ?? null };
    }
    if (options.responses) {
      const { data, response } = await client.responses
        .create(
          {
            model,
            input: options.prompt,
            ...(maxTokens ? { max_output_tokens: maxTokens } : {}),
            // svc's provider object (OpenRouter's names): the SDK passes a field it does not know through as sent.
            ...(provider && ({ provider } as object)),
          } as OpenAI.Responses.ResponseCreateParamsNonStreaming,
          headers,
        )
        .withResponse();
      return responsesResult(response.headers, data);
    }
    const { data, response } = await client.chat.completions
      .create(
        {
          model,
          messages: [{ role: "user", content: options.prompt }],
          ...(maxTokens ? { max_tokens: maxTokens } : {}),
          ...(provider && ({ provider } as object)),
        } as OpenAI.ChatCompletionCreateParamsNonStreaming,
        headers,
      )
      .withResponse();
    const choice = data.choices[0];
    // svc's additions to OpenAI's usage object (OpenRouter's names): the SDK passes them through untyped.
    const usage = data.usage as (OpenAI.CompletionUsage & { cost?: number; cost_details?: CostDetails }) | undefined;
    return withHeaders(response.headers, {
      api: "chat.completions",
      id: data.id,
      model: data.model,
      answer: choice?.message.content ?? "",
      finish_reason: choice?.finish_reason ?? "",
      usage: {
        prompt_tokens: data.usage?.prompt_tokens ?? 0,
        completion_tokens: data.usage?.completion_tokens ?? 0,
        total_tokens: data.usage?.total_tokens ?? 0,
      },
      cost_details: usage?.cost_details ?? null,
    });
  } catch (error) {
    throw fromOpenAI(ctx, error);
  }
}

/** A response's result: its text, status and usage (with svc's cost_details), and what its headers say. */
function responsesResult(headers: Headers, data: OpenAI.Responses.Response): ChatResult {
  // svc's additions to the Responses usage object, as on chat completions.
  const usage = data.usage as (OpenAI.Responses.ResponseUsage & { cost_details?: CostDetails }) | undefined;
  const why = data.incomplete_details?.reason;
  return withHeaders(headers, {
    api: "responses",
    id: data.id,
    model: data.model,
    answer: data.output_text,
    finish_reason: why ? `${data.status}: ${why}` : (data.status ?? ""),
    usage: {
      prompt_tokens: usage?.input_tokens ?? 0,
      completion_tokens: usage?.output_tokens ?? 0,
      total_tokens: usage?.total_tokens ?? 0,
    },
    cost_details: usage?.cost_details ?? null,
  });
}

type Answered = Pick<ChatResult, "api" | "id" | "model" | "answer" | "finish_reason" | "usage" | "cost_details">;

/** The answer with what its headers say: the generation's id, the cost, price, burn, max price and balance. */
function withHeaders(h: Headers, answered: Answered): ChatResult {
  const num = (name: string) => (h.get(name) === null ? null : Number(h.get(name)));
  return {
    ...answered,
    generation_id: h.get("x-svc-generation-id"),
    cost: answered.cost_details?.charge ?? h.get("x-svc-cost"),
    price_cents: num("x-svc-price-cents"),
    burn_diem: h.get("x-svc-burn-diem"),
    max_cents: num("x-svc-max-cents"),
    balance_remaining: h.get("x-balance-remaining"),
    request_id: h.get("x-request-id"),
  };
}

/**
 * A completion's record by its id, with the API key (--api-key, SVC_API_KEY or the saved one) when there is one,
 * else the saved session: GET /v1/generations/{id} takes either credential of the account.
 */
export async function getGeneration(ctx: Context, id: string | undefined, flagKey: string | undefined): Promise<Generation> {
  if (!id) throw new CliError("Usage: generation <id> (the chatcmpl-… id a chat printed)", EXIT.usage, "usage");
  const key = flagKey ?? ctx.env.SVC_API_KEY ?? ctx.store.get(ctx.config.baseUrl)?.apiKey?.key;
  const path = `/v1/generations/${encodeURIComponent(id)}`;
  const { data } = await callApi<Generation>(ctx, path, key ? { headers: { authorization: `Bearer ${key}` } } : { session: true });
  return data;
}

function fromOpenAI(ctx: Context, error: unknown): CliError {
  if (error instanceof OpenAI.APIConnectionError) {
    return new CliError(
      `Cannot reach ${ctx.config.baseUrl}/v1 (${error.message}).${ctx.config.isLocal ? " Is `npm run dev` running?" : ""}`,
      EXIT.failure,
      "unreachable",
    );
  }
  if (error instanceof OpenAI.APIError && error.status !== undefined && error.headers) {
    const body = (error.error ?? {}) as Record<string, unknown>;
    const { message, code: _code, type: _type, ...details } = body;
    return explainApiError(
      new ApiError(error.status, String(error.code ?? `http_${error.status}`), String(message ?? error.message), details, error.headers),
    );
  }
  return error instanceof CliError
    ? error
    : new CliError(`The completion failed: ${(error as Error).message}`, EXIT.failure, "chat_failed");
}
