/**
 * The Responses API's event stream, made from a chat stream's deltas: OpenAI's sequence, so its SDK's
 * `responses.stream()`, the Agents SDK's streamed runs, Codex and the AI SDK read it as they read OpenAI's.
 *
 *   response.created, response.in_progress
 *   per output item, in the order its first delta arrives (reasoning, message, function calls):
 *     response.output_item.added                          (always before the item's first delta)
 *     reasoning:  response.reasoning_text.delta …  response.reasoning_text.done
 *     message:    response.content_part.added, response.output_text.delta … response.output_text.done,
 *                 response.content_part.done   (a refusal: response.refusal.delta … response.refusal.done)
 *     function:   response.function_call_arguments.delta … response.function_call_arguments.done
 *     response.output_item.done
 *   exactly one of response.completed | response.incomplete | response.failed, with the usage and its cost
 *
 * Every event carries `sequence_number` (0, 1, 2, …). Items are closed in the order they were opened, when the
 * answer ends. The terminal event's `response` is the non-streaming answer's own object (toResponse), its output in
 * the streamed order and with the streamed item ids, so a client that rebuilds the answer from the deltas and one that
 * reads the final object see the same thing. Pure: the events are handed to `emit`, the caller writes them.
 */
import "server-only";
import type { ResponseObject, ResponseOutputItem, ResponsesRequest } from "@/lib/router/responses-schemas";
import { responseEnvelope, toResponse } from "@/lib/router/responses-translation";
import { responseIdOf } from "@/lib/wire";
import type { ChatCompletionResponse } from "@/lib/router/schemas";

/** What one chat chunk adds to the answer (the first choice's delta), as the stream engine reads it. */
export type AnswerDelta = {
  content?: string;
  refusal?: string;
  reasoning?: string;
  toolCalls?: { index: number; id?: string; name?: string; arguments?: string }[];
};

export type ResponsesEvent = { type: string; sequence_number: number } & Record<string, unknown>;

type OpenItem =
  | { kind: "reasoning"; id: string; outputIndex: number; text: string }
  | { kind: "message"; id: string; outputIndex: number; text: string; refusal: string; part: "text" | "refusal" | null }
  | { kind: "function"; id: string; outputIndex: number; index: number; callId: string; name: string; arguments: string };

export class ResponsesStreamWriter {
  private sequence = 0;
  private readonly items: OpenItem[] = [];
  private readonly random: string;
  private ended = false;

  constructor(
    private readonly req: ResponsesRequest,
    private readonly completionId: string,
    private readonly created: number,
    private readonly model: string,
    private readonly emit: (event: ResponsesEvent) => void,
  ) {
    this.random = responseIdOf(completionId).slice("resp_".length);
  }

  /** response.created and response.in_progress: the response as it starts, with no output yet. */
  start(): void {
    const response = this.shell("in_progress");
    this.send("response.created", { response });
    this.send("response.in_progress", { response });
  }

  delta(delta: AnswerDelta): void {
    if (this.ended) return;
    if (delta.reasoning) {
      const item = this.open("reasoning");
      item.text += delta.reasoning;
      this.send("response.reasoning_text.delta", {
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: 0,
        delta: delta.reasoning,
      });
    }
    if (delta.content) this.messageDelta("text", delta.content);
    if (delta.refusal) this.messageDelta("refusal", delta.refusal);
    for (const call of delta.toolCalls ?? []) {
      let item = this.items.find((i): i is Extract<OpenItem, { kind: "function" }> => i.kind === "function" && i.index === call.index);
      if (!item) {
        item = {
          kind: "function",
          id: `fc_${this.random}_${this.items.filter((i) => i.kind === "function").length}`,
          outputIndex: this.items.length,
          index: call.index,
          callId: call.id ?? "",
          name: call.name ?? "",
          arguments: "",
        };
        this.items.push(item);
        this.send("response.output_item.added", { output_index: item.outputIndex, item: this.itemView(item, "in_progress") });
      } else {
        if (call.id && !item.callId) item.callId = call.id;
        if (call.name && !item.name) item.name = call.name;
      }
      if (call.arguments) {
        item.arguments += call.arguments;
        this.send("response.function_call_arguments.delta", { item_id: item.id, output_index: item.outputIndex, delta: call.arguments });
      }
    }
  }

  /** The answer is complete (its clear done): every open item closed, then response.completed or response.incomplete. */
  finish(completion: ChatCompletionResponse, usageExtras: Record<string, unknown> = {}): ResponseObject {
    const response = this.withUsageExtras(this.finalResponse(completion), usageExtras);
    this.closeItems();
    this.send(response.status === "completed" ? "response.completed" : "response.incomplete", { response });
    this.ended = true;
    return response;
  }

  /**
   * The stream failed (the upstream broke or went silent): open items closed as they stand, then response.failed with
   * the error and, when something was billed, the usage it cost.
   */
  fail(error: { code: string; message: string }, billed: ChatCompletionResponse | null, usageExtras: Record<string, unknown> = {}): void {
    if (this.ended) return;
    this.closeItems();
    const base = billed
      ? this.withUsageExtras(this.finalResponse(billed), usageExtras)
      : { ...this.shell("failed"), output: this.items.map((i) => this.itemView(i, "completed")) };
    this.send("response.failed", { response: { ...base, status: "failed", incomplete_details: null, error: error } });
    this.ended = true;
  }

  private messageDelta(part: "text" | "refusal", text: string): void {
    const item = this.open("message");
    if (item.part !== part) {
      this.closePart(item);
      item.part = part;
      const content_index = part === "refusal" && item.text !== "" ? 1 : 0;
      this.send("response.content_part.added", {
        item_id: item.id,
        output_index: item.outputIndex,
        content_index,
        part: part === "text" ? { type: "output_text", text: "", annotations: [] } : { type: "refusal", refusal: "" },
      });
    }
    const content_index = part === "refusal" && item.text !== "" ? 1 : 0;
    if (part === "text") item.text += text;
    else item.refusal += text;
    this.send(part === "text" ? "response.output_text.delta" : "response.refusal.delta", {
      item_id: item.id,
      output_index: item.outputIndex,
      content_index,
      delta: text,
    });
  }

  private open<K extends "reasoning" | "message">(kind: K): Extract<OpenItem, { kind: K }> {
    const existing = this.items.find((i) => i.kind === kind);
    if (existing) return existing as Extract<OpenItem, { kind: K }>;
    const outputIndex = this.items.length;
    const item = (
      kind === "reasoning"
        ? { kind, id: `rs_${this.random}`, outputIndex, text: "" }
        : { kind, id: `msg_${this.random}`, outputIndex, text: "", refusal: "", part: null }
    ) as Extract<OpenItem, { kind: K }>;
    this.items.push(item);
    this.send("response.output_item.added", { output_index: outputIndex, item: this.itemView(item, "in_progress") });
    return item;
  }

  private closePart(item: Extract<OpenItem, { kind: "message" }>): void {
    if (item.part === null) return;
    const base = { item_id: item.id, output_index: item.outputIndex };
    if (item.part === "text") {
      this.send("response.output_text.done", { ...base, content_index: 0, text: item.text });
      this.send("response.content_part.done", {
        ...base,
        content_index: 0,
        part: { type: "output_text", text: item.text, annotations: [] },
      });
    } else {
      const content_index = item.text !== "" ? 1 : 0;
      this.send("response.refusal.done", { ...base, content_index, refusal: item.refusal });
      this.send("response.content_part.done", { ...base, content_index, part: { type: "refusal", refusal: item.refusal } });
    }
    item.part = null;
  }

  private closeItems(): void {
    for (const item of this.items) {
      if (item.kind === "reasoning") {
        this.send("response.reasoning_text.done", { item_id: item.id, output_index: item.outputIndex, content_index: 0, text: item.text });
      } else if (item.kind === "message") {
        this.closePart(item);
      } else {
        this.send("response.function_call_arguments.done", {
          item_id: item.id,
          output_index: item.outputIndex,
          name: item.name,
          arguments: item.arguments,
        });
      }
      this.send("response.output_item.done", { output_index: item.outputIndex, item: this.itemView(item, "completed") });
    }
    this.items.length = 0;
  }

  private itemView(item: OpenItem, status: "in_progress" | "completed"): Record<string, unknown> {
    switch (item.kind) {
      case "reasoning":
        return {
          type: "reasoning",
          id: item.id,
          summary: [],
          content: status === "completed" ? [{ type: "reasoning_text", text: item.text }] : [],
        };
      case "message": {
        const content =
          status === "completed"
            ? [
                ...(item.text !== "" || item.refusal === "" ? [{ type: "output_text", text: item.text, annotations: [] }] : []),
                ...(item.refusal !== "" ? [{ type: "refusal", refusal: item.refusal }] : []),
              ]
            : [];
        return { type: "message", id: item.id, status, role: "assistant", content };
      }
      case "function":
        return {
          type: "function_call",
          id: item.id,
          status,
          call_id: item.callId,
          name: item.name,
          arguments: status === "completed" ? item.arguments : "",
        };
    }
  }

  /** svc's additions to the terminal usage (the balance after the clear: a stream's headers went out before it). */
  private withUsageExtras(response: ResponseObject, extras: Record<string, unknown>): ResponseObject {
    return response.usage && Object.keys(extras).length > 0 ? { ...response, usage: { ...response.usage, ...extras } } : response;
  }

  /** The non-streaming answer's object, its output in the streamed order (each item where its first delta put it). */
  private finalResponse(completion: ChatCompletionResponse): ResponseObject {
    const response = toResponse(this.req, completion);
    const order = new Map(this.items.map((item) => [item.id, item.outputIndex]));
    const rank = (item: ResponseOutputItem) => order.get(item.id) ?? Number.MAX_SAFE_INTEGER;
    return { ...response, output: [...response.output].sort((a, b) => rank(a) - rank(b)) };
  }

  /** The response before its answer: every field the final object has, with no output and no usage yet. */
  private shell(status: "in_progress" | "failed"): Record<string, unknown> {
    return {
      ...responseEnvelope(this.req, this.completionId, this.created, this.model),
      status,
      incomplete_details: null,
      output: [],
      usage: null,
    };
  }

  private send(type: string, fields: Record<string, unknown>): void {
    this.emit({ type, sequence_number: this.sequence++, ...fields });
  }
}
