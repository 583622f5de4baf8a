import "server-only";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { formatMicros } from "@/lib/money";
import { registerStream } from "@/lib/ops/shutdown";
import {
  billAndClear,
  newCompletionId,
  reportForwardFailure,
  REQUEST_REJECTED_STATUSES,
  reserveCompletion,
  responseBody,
  type CompletionInput,
  type ReservedCompletion,
} from "@/lib/router/complete";
import { EventStream } from "@/lib/router/event-stream";
import { releaseHoldOrRetry } from "@/lib/router/hold-release";
import { extendHold, HOLD_GRACE_MS } from "@/lib/router/holds";
import { requestRejected, streamFailed } from "@/lib/router/refusals";
import type { ResponsesRequest } from "@/lib/router/responses-schemas";
import { ResponsesStreamWriter, type AnswerDelta } from "@/lib/router/responses-stream";
import type { ChatCompletionResponse } from "@/lib/router/schemas";
import { takeStreamSlot } from "@/lib/router/stream-slots";
import { answerBounds, classifyUpstreamError, classifyUpstreamStatus, type ForwardFailure } from "@/lib/router/upstream-failure";
import { parseUpstreamAnswer, upstreamErrorMessage, type UpstreamAnswer } from "@/lib/upstream/answer";
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  streamChatCompletion,
  UpstreamError,
  type UpstreamResponse,
  type UpstreamStream,
} from "@/lib/upstream/client";
import { upstreamKey } from "@/lib/upstream/key-cache";
import { streamedAnswerToBill } from "@/lib/upstream/metering";
import type { CompletionEnd } from "@/lib/wire";
import { ChatStream, type ChatDelta, type StreamFailure } from "@/lib/upstream/stream-answer";

/**
 * A streamed completion (POST /v2/chat/completions and /v2/responses with `stream: true`): the same reservation as a
 * completion (lib/router/complete.ts reserveCompletion: key, model, features, provider, max price, budgets), then the
 * answer relayed as it arrives and one clear when it ends, however it ends.
 *
 * Before the first byte: everything a completion refuses is refused with its usual JSON error (reserveCompletion), and
 * a key or account at its number of open streams gets 429 (stream-slots.ts). Then the headers go out at once (the
 * generation id, the price, the reservation's ceilings) and the body is an event stream (event-stream.ts: backpressure,
 * keep-alive comments while the upstream is silent, the client's hang-up as a signal).
 *
 * The upstream is asked once, with `stream: true` and `stream_options.include_usage`; each chunk is read
 * (stream-answer.ts ChatStream) and relayed under svc's id and model name: as `chat.completion.chunk` events, or as the
 * Responses API's event sequence (responses-stream.ts). An upstream that answers JSON is replayed as a stream; one that
 * refuses `stream: true` (a 400/422/501 that names streaming) is asked once more without it and replayed.
 *
 * How it ends (`end`, recorded per generation) and what it bills (metering.ts streamedAnswerToBill, the one rule):
 * - completed: the upstream's final usage checked against svc's count, as a JSON answer's;
 * - client_cancelled: the client hung up (or read nothing for STREAM_STALL_MS while its buffer was full): the upstream
 *   call is closed (its engine stops) and what had arrived is billed by svc's count;
 * - upstream_error: the upstream broke, sent an error or garbage: an error event (chat: `data: {"error": …}` with no
 *   [DONE]; responses: response.failed with the usage), what arrived billed by svc's count, and the failure counts in
 *   the offer's health as a failed answer's would;
 * - timeout: the upstream went silent past STREAM_IDLE_TIMEOUT_MS (counted like a failed answer), or the stream reached
 *   STREAM_MAX_DURATION_MS or the server's drain deadline (svc's own limits: not counted).
 * Nothing billable arrived → nothing billed, the hold released. Each stream clears at most once, through the same
 * group commit as completions; its hold is kept from the sweeper for the stream's longest life.
 */

export type StreamFormat = { kind: "chat" } | { kind: "responses"; request: ResponsesRequest };

/** Renders an error as the API's error body (lib/http/errors.ts errorBody, which this layer does not import). */
export type ErrorRenderer = (error: AppError) => { error: Record<string, unknown> };

export async function streamCompletion(
  input: CompletionInput & {
    format: StreamFormat;
    renderError: ErrorRenderer;
    /** The edge's own headers for the answer (e.g. X-Svc-Ignored-Fields). */
    headers?: Record<string, string>;
  },
): Promise<Response> {
  const giveBack = takeStreamSlot(input.apiKey);
  let reserved: ReservedCompletion;
  try {
    reserved = await reserveCompletion(input);
  } catch (error) {
    giveBack();
    throw error;
  }
  const completionId = newCompletionId();
  const relay = new Relay(reserved, completionId, input.format, input.renderError);
  void relay.run().finally(giveBack);
  const { reservation } = reserved;
  return new Response(relay.events.body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      "x-svc-generation-id": completionId,
      "x-svc-price-cents": String(reservation.priceCents),
      "x-svc-max-cents": String(reservation.maxPriceCents),
      "x-svc-reserved": formatMicros(reservation.amountMicros),
      "x-svc-max-burn-diem": formatMicros(reservation.burnMicroDiem),
      ...input.headers,
    },
  });
}

/** How long an upstream may keep its body open after [DONE] before svc closes it (its answer is complete). */
const DRAIN_AFTER_DONE_MS = 250;

/** How the forward ended, before billing. */
type Ending =
  | { end: "completed"; answer: UpstreamAnswer }
  | {
      end: Exclude<CompletionEnd, "completed">;
      partial: UpstreamAnswer;
      /** The supplier's failure to weigh in its health (null: not the upstream's doing, or not counted). */
      failure: ForwardFailure | null;
      /** What the buyer is told (null: the client is gone). */
      error: AppError | null;
      /** The answer was read to its end after the client left (an offer that bills a cancelled answer in full). */
      whole?: boolean;
    };

const EMPTY_ANSWER: UpstreamAnswer = {
  message: { role: "assistant", content: "" },
  finishReason: "stop",
  logprobs: null,
  systemFingerprint: null,
  usage: null,
};

class Relay {
  readonly events = new EventStream();
  private readonly stop = new AbortController();
  private readonly signal: AbortSignal;
  private readonly created: number;
  private readonly chat: ChatStream = new ChatStream();
  private readonly responses: ResponsesStreamWriter | null;
  private readonly excludeReasoning: boolean;
  private roleSent = false;
  private finishSent = false;
  /** Tool-call indexes already announced (each gets its id and name on its first delta). */
  private readonly toolCallsSeen = new Set<number>();
  private stoppedBy: "shutdown" | null = null;
  /** The offer bills a cancelled answer in full: its stream is read to the end even after the client left. */
  private readToEnd = false;
  private started = 0;
  private done: Promise<void> | null = null;

  constructor(
    private readonly reserved: ReservedCompletion,
    private readonly completionId: string,
    private readonly format: StreamFormat,
    private readonly renderError: ErrorRenderer,
  ) {
    this.signal = AbortSignal.any([this.events.signal, this.stop.signal]);
    this.created = Math.floor(reserved.now.getTime() / 1000);
    this.excludeReasoning = reserved.body.reasoning?.exclude === true;
    this.responses =
      format.kind === "responses"
        ? new ResponsesStreamWriter(format.request, completionId, this.created, reserved.model.id, (event) =>
            this.events.sendEvent(event.type, JSON.stringify(event)),
          )
        : null;
  }

  /** Relays, bills and clears; never throws (what fails is logged, and the hold released if it was not cleared). */
  run(): Promise<void> {
    this.done ??= this.relayAndClear().catch((error: unknown) => log.error("stream failed", { error, completionId: this.completionId }));
    return this.done;
  }

  private async relayAndClear(): Promise<void> {
    const { reservation } = this.reserved;
    const unregister = registerStream(() => {
      this.stoppedBy = "shutdown";
      this.stop.abort(new Error("the server is stopping"));
      return this.run();
    });
    // The hold must outlive the stream: the sweeper releases holds past a completion's deadline (UPSTREAM_TIMEOUT_MS
    // plus a grace from the reservation). Most streams end well before it, so the write is made only by one that
    // lasts half that long, never on the way to the first token.
    let kept: Promise<unknown> = Promise.resolve();
    const keep = setTimeout(() => {
      kept = extendHold(reservation.holdId, new Date(Date.now() + env.STREAM_MAX_DURATION_MS + HOLD_GRACE_MS)).catch((error: unknown) =>
        log.warn("hold not extended", { error }),
      );
    }, env.UPSTREAM_TIMEOUT_MS / 2);
    keep.unref();
    this.responses?.start();
    this.started = performance.now();
    try {
      const ending = await this.forward();
      clearTimeout(keep);
      await kept;
      await this.finish(ending);
    } catch (error) {
      await releaseHoldOrRetry(reservation.holdId);
      this.sendError(
        new AppError("internal_error", `The stream failed inside svc (generation ${this.completionId}); nothing was charged.`),
      );
      throw error;
    } finally {
      unregister();
      this.reserved.meter.cancel();
      this.events.close();
    }
  }

  /** Forwards once (once more without streaming if the upstream refuses to stream) and relays what arrives. */
  private async forward(): Promise<Ending> {
    const { upstream } = this.reserved.reservation;
    // The offer's declarations, read by the reservation's own statement.
    const terms = upstream;
    // An upstream that bills a cancelled answer in full is read to its end whoever hangs up (only a stop ends it).
    this.readToEnd = terms.billsCancelledInFull;
    const signal = this.readToEnd ? this.stop.signal : this.signal;
    // Both calls go through the streaming client, so the client's hang-up closes either.
    const call = (stream: boolean) =>
      streamChatCompletion({
        baseUrl: upstream.baseUrl,
        apiKey: upstreamKey(upstream.keyCiphertext),
        body: this.upstreamBody(stream),
        deadlines: {
          firstByteTimeoutMs: env.STREAM_IDLE_TIMEOUT_MS,
          idleTimeoutMs: env.STREAM_IDLE_TIMEOUT_MS,
          totalTimeoutMs: env.STREAM_MAX_DURATION_MS,
        },
        signal,
      });
    try {
      if (!terms.streams) return this.replay(await (await call(false)).read());
      const streamed = await call(true);
      if (streamed.status === 200 && streamed.format === "event-stream") return await this.relay(streamed);
      let res = await streamed.read();
      if (res.status !== 200 && refusesStreaming(res)) res = await (await call(false)).read();
      return this.replay(res);
    } catch (error) {
      return this.broken(error);
    }
  }

  /** The request as the upstream gets it: svc's envelope (its model name, the output cap, streaming) and the buyer's fields. */
  private upstreamBody(stream: boolean): string {
    const { reservation, sizing, forwarded } = this.reserved;
    const streaming = stream ? `"stream":true,"stream_options":{"include_usage":true},` : `"stream":false,`;
    return `{"model":${JSON.stringify(reservation.upstream.model)},"max_tokens":${sizing.maxOutputTokens},${streaming}${forwarded.slice(1)}`;
  }

  /** Reads the upstream's event stream, relaying each delta while the client keeps up. */
  private async relay(call: UpstreamStream): Promise<Ending> {
    // After [DONE] the body is read to its end (an upstream ends it at once), so its connection goes back to the pool
    // instead of being destroyed and opened anew for the next stream; one that does not end it is cut after a moment.
    let done = false;
    let cutoff: ReturnType<typeof setTimeout> | undefined;
    try {
      for await (const bytes of call.body) {
        if (done) continue;
        for (const event of this.chat.push(bytes)) {
          if (event.type === "chunk") {
            if (event.delta) this.relayDelta(event.delta);
          } else if (event.type === "failed") {
            call.abort();
            return this.failedStream(event.failure);
          } else {
            done = true;
            cutoff = setTimeout(() => call.abort(), DRAIN_AFTER_DONE_MS);
          }
        }
        // A client that is gone (or stalled) stops the relay; read to the end it is only drained.
        if (!done && !(await this.events.room(env.STREAM_STALL_MS)) && !this.readToEnd) break;
      }
    } catch (error) {
      if (!done) return this.broken(error);
    } finally {
      clearTimeout(cutoff);
    }
    if (!done && this.signal.aborted && !(this.readToEnd && this.events.signal.aborted && !this.stop.signal.aborted)) {
      return this.broken(this.signal.reason);
    }
    const outcome = this.chat.end();
    if (!outcome.ok) return this.failedStream(outcome.failure);
    // Read to its end after the client left: what was generated, at the upstream's word checked by svc's count.
    if (this.events.signal.aborted) return { end: "client_cancelled", partial: outcome.answer, failure: null, error: null, whole: true };
    return { end: "completed", answer: outcome.answer };
  }

  /** A JSON answer (the upstream answered without streaming, or was asked without it), sent as a stream. */
  private replay(res: UpstreamResponse): Ending {
    const answer = res.status === 200 ? parseUpstreamAnswer(res.json) : null;
    if (answer) {
      const { message } = answer;
      this.relayDelta({
        content: message.content,
        refusal: message.refusal,
        reasoning: message.reasoning_content ?? null,
        toolCalls: (message.tool_calls ?? []).map((call, index) => ({
          index,
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        })),
        finishReason: answer.finishReason,
        logprobs: answer.logprobs,
      });
      return { end: "completed", answer };
    }
    if (REQUEST_REJECTED_STATUSES.has(res.status)) {
      return { end: "upstream_error", partial: EMPTY_ANSWER, failure: null, error: requestRejected(res.status, res.json) };
    }
    return this.failed(classifyUpstreamStatus(res.status, res.json), EMPTY_ANSWER);
  }

  /** The call threw: the client left, the server is stopping, or the upstream broke or went silent. */
  private broken(error: unknown): Ending {
    const partial = this.chat.partial();
    if (this.stoppedBy === "shutdown") {
      const reason = "the server stopped while the stream was live";
      return { end: "timeout", partial, failure: null, error: streamFailed({ reason, cause: "ours" }, false, null) };
    }
    if (this.events.signal.aborted) return { end: "client_cancelled", partial, failure: null, error: null };
    if (!(error instanceof UpstreamError)) throw error;
    const bounds = answerBounds(this.reserved.body, this.reserved.sizing);
    const failure = classifyUpstreamError(error, bounds, {
      maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
      timeoutMs: env.UPSTREAM_TIMEOUT_MS,
    });
    if (error.kind === "timeout") {
      // The stream's own longest life is svc's limit, not the supplier's failure.
      const counted = error.deadline === "total" ? null : failure;
      return { end: "timeout", partial, failure: counted, error: null };
    }
    return { end: "upstream_error", partial, failure, error: null };
  }

  private failedStream(failure: StreamFailure): Ending {
    const said = failure.upstreamMessage ? `: ${failure.upstreamMessage}` : "";
    const reason = `stream ${failure.kind}${said}`.slice(0, 300);
    return this.failed({ reason, cause: "answer" }, this.chat.partial());
  }

  private failed(failure: ForwardFailure, partial: UpstreamAnswer): Ending {
    return { end: "upstream_error", partial, failure, error: null };
  }

  /** Bills what the ending says, clears it once, then sends the last events. */
  private async finish(ending: Ending): Promise<void> {
    const { reserved } = this;
    const { reservation } = reserved;
    const answer = ending.end === "completed" ? ending.answer : ending.partial;
    const toBill = streamedAnswerToBill(ending.end, answer, reserved.rules, ending.end !== "completed" && ending.whole === true);
    let billed: ChatCompletionResponse | null = null;
    let balance: bigint | null = null;
    if (toBill === null) {
      await releaseHoldOrRetry(reservation.holdId);
    } else {
      const latencyMs = performance.now() - this.started;
      const whole = ending.end === "completed" || ending.whole === true;
      const { usage, clear } = await billAndClear({
        reserved,
        completionId: this.completionId,
        answer: toBill,
        latencyMs,
        whole,
        endReason: ending.end,
        streamed: true,
      });
      balance = clear.balanceMicros;
      billed = responseBody({
        completionId: this.completionId,
        created: this.created,
        model: reserved.model.id,
        answer: toBill,
        excludeReasoning: this.excludeReasoning,
        usage,
        clear,
      });
    }
    const counted =
      ending.end !== "completed" && ending.failure !== null
        ? await reportForwardFailure(reservation.offerId, reservation.accountId, ending.failure, reserved.clock(), billed === null)
        : false;
    log.info("stream ended", { completionId: this.completionId, end: ending.end, charged: billed?.usage?.cost ?? 0 });

    if (ending.end === "completed") {
      if (this.responses) {
        this.responses.finish(billed!, { balance_remaining: formatMicros(balance!) });
      } else {
        if (!this.finishSent) this.sendChunk({}, answer.finishReason, null);
        this.sendUsage(billed!, balance!);
        this.events.send("[DONE]");
      }
      return;
    }
    if (ending.end === "client_cancelled") return;
    const charged = billed?.usage?.cost_details.charge ?? null;
    const error =
      ending.error ??
      streamFailed(
        ending.failure ?? { reason: ending.end === "timeout" ? "timeout" : "upstream error", cause: "answer" },
        counted,
        charged,
      );
    if (this.responses) {
      this.responses.fail(
        { code: error.code, message: error.message },
        billed,
        balance === null ? {} : { balance_remaining: formatMicros(balance) },
      );
    } else {
      if (billed) this.sendUsage(billed, balance!);
      this.sendError(error);
    }
  }

  private relayDelta(delta: ChatDelta): void {
    const reasoning = this.excludeReasoning ? null : delta.reasoning;
    if (this.responses) {
      const toolCalls = delta.toolCalls.map((call) => ({
        index: call.index,
        ...(call.id !== null && { id: call.id }),
        ...(call.name !== null && { name: call.name }),
        ...(call.arguments !== null && { arguments: call.arguments }),
      }));
      const out: AnswerDelta = {
        ...(delta.content !== null && { content: delta.content }),
        ...(typeof delta.refusal === "string" && { refusal: delta.refusal }),
        ...(reasoning !== null && { reasoning }),
        ...(toolCalls.length > 0 && { toolCalls }),
      };
      this.responses.delta(out);
      return;
    }
    const out: Record<string, unknown> = {};
    if (!this.roleSent) out.role = "assistant";
    if (delta.content !== null) out.content = delta.content;
    if (delta.refusal !== undefined) out.refusal = delta.refusal;
    if (reasoning !== null) out.reasoning_content = reasoning;
    if (delta.toolCalls.length > 0) {
      out.tool_calls = delta.toolCalls.map((call) => {
        const first = !this.toolCallsSeen.has(call.index);
        this.toolCallsSeen.add(call.index);
        const fn: Record<string, string> = {};
        if (call.name !== null) fn.name = call.name;
        fn.arguments = call.arguments ?? "";
        // A client assembles a call from its first delta's id and name (the AI SDK requires both there).
        return first || call.id !== null
          ? { index: call.index, id: call.id ?? `call_${call.index}`, type: "function", function: fn }
          : { index: call.index, function: fn };
      });
    }
    if (Object.keys(out).length === 0 && delta.finishReason === null) return;
    this.roleSent = true;
    this.sendChunk(out, delta.finishReason, delta.logprobs);
  }

  private sendChunk(delta: Record<string, unknown>, finishReason: string | null, logprobs: Record<string, unknown> | null): void {
    if (finishReason !== null) this.finishSent = true;
    this.sendChatChunk({ choices: [{ index: 0, delta, logprobs, finish_reason: finishReason }] });
  }

  /** A `chat.completion.chunk` under svc's id, creation time and model name. */
  private sendChatChunk(fields: { choices: unknown[]; usage?: unknown }): void {
    this.events.send(
      JSON.stringify({
        id: this.completionId,
        object: "chat.completion.chunk",
        created: this.created,
        model: this.reserved.model.id,
        ...fields,
      }),
    );
  }

  /**
   * The usage chunk: no choices, the billed usage with its cost and the balance after the clear. Sent whether or not
   * the request set stream_options.include_usage, as OpenRouter does (its clients ask for nothing and read it).
   */
  private sendUsage(billed: ChatCompletionResponse, balance: bigint): void {
    this.sendChatChunk({ choices: [], usage: { ...billed.usage, balance_remaining: formatMicros(balance) } });
  }

  /** Chat's error event: `data: {"error": …}`, never followed by [DONE] (clients then raise it). */
  private sendError(error: AppError): void {
    if (this.responses) this.responses.fail({ code: error.code, message: error.message }, null);
    else this.events.send(JSON.stringify(this.renderError(error)));
  }
}

/** An upstream that cannot stream says so with a 400, 422 or 501 that names streaming. */
function refusesStreaming(res: UpstreamResponse): boolean {
  if (res.status !== 400 && res.status !== 422 && res.status !== 501) return false;
  const said = `${upstreamErrorMessage(res.json) ?? ""} ${res.rawText.slice(0, 2_000)}`;
  return /stream/i.test(said);
}
