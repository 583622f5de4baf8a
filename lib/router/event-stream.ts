import "server-only";

/**
 * The buyer's side of a stream (text/event-stream): the body a streaming route answers with, fed event by event by its
 * producer (lib/router/stream.ts). It holds what one stream may make the server hold, and tells the producer what the
 * client does:
 *
 * - Backpressure. Events are queued up to HIGH_WATER_BYTES; beyond it `room()` waits until the client has read some
 *   (the producer then stops reading its upstream, whose socket stops in turn). A client that reads nothing for
 *   `stallMs` is treated as gone: `room()` answers false and the stream ends (a slow reader holds a bounded amount for a
 *   bounded time, never the whole answer).
 * - Keep-alive. A comment line (`: keep-alive`) goes out whenever nothing was sent for KEEP_ALIVE_MS, from the moment
 *   the stream opens: proxies and clients that time out an idle connection see bytes while an upstream is silent (a
 *   slow first token). Clients' SSE parsers ignore comments (OpenAI's, the AI SDK's, OpenRouter's own).
 * - The client hanging up cancels the body (the front door's writer, or Next's, cancels it on close): `signal` aborts,
 *   and nothing more is queued.
 */

/** Queued bytes beyond which the producer waits for the client to read. */
export const HIGH_WATER_BYTES = 64 * 1024;
/** The longest silence on a live stream before a keep-alive comment (issue 36: at least every 5 s). */
export const KEEP_ALIVE_MS = 4_000;

const encoder = new TextEncoder();
const KEEP_ALIVE = encoder.encode(": keep-alive\n\n");

export class EventStream {
  readonly body: ReadableStream<Uint8Array>;
  private readonly abort = new AbortController();
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private closed = false;
  private waiting: (() => void)[] = [];
  private keepAlive: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly keepAliveMs = KEEP_ALIVE_MS) {
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
          this.armKeepAlive();
        },
        pull: () => this.wakeWaiters(),
        cancel: () => this.gone(),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_BYTES }),
    );
  }

  /** Aborted when the client has gone (hung up, or stalled past its bound): stop producing. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** One event: `data: <data>` (a single line: JSON never holds a raw newline). */
  send(data: string): void {
    this.enqueue(encoder.encode(`data: ${data}\n\n`));
  }

  /** A named event: `event: <name>` then `data: <data>` (the Responses API names each event by its type). */
  sendEvent(name: string, data: string): void {
    this.enqueue(encoder.encode(`event: ${name}\ndata: ${data}\n\n`));
  }

  /** An SSE comment line, ignored by clients (e.g. `: keep-alive`). */
  comment(text: string): void {
    this.enqueue(encoder.encode(`: ${text}\n\n`));
  }

  /**
   * Resolves true once the client has read enough that more may be queued; false when the client is gone or has read
   * nothing for `stallMs` (then the stream is closed and `signal` aborted).
   */
  async room(stallMs: number): Promise<boolean> {
    if (this.closed) return false;
    if ((this.controller.desiredSize ?? 0) > 0) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stalled = await new Promise<boolean>((resolve) => {
      this.waiting.push(() => resolve(false));
      timer = setTimeout(() => resolve(true), stallMs);
    });
    clearTimeout(timer);
    if (stalled && !this.closed) {
      this.gone();
      // Errored, not closed: whichever writer serves the body ends the response as cut short, not as whole.
      try {
        this.controller.error(new Error("the client read nothing for too long"));
      } catch {
        // Already cancelled by the client.
      }
    }
    return !this.closed;
  }

  /** Ends the stream (after its last event). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.keepAlive);
    this.wakeWaiters();
    try {
      this.controller.close();
    } catch {
      // Already cancelled by the client.
    }
  }

  private enqueue(bytes: Uint8Array): void {
    if (this.closed) return;
    try {
      this.controller.enqueue(bytes);
    } catch {
      return this.gone();
    }
    this.armKeepAlive();
  }

  private armKeepAlive(): void {
    clearTimeout(this.keepAlive);
    if (this.closed) return;
    this.keepAlive = setTimeout(() => {
      if (this.closed) return;
      try {
        this.controller.enqueue(KEEP_ALIVE);
      } catch {
        return this.gone();
      }
      this.armKeepAlive();
    }, this.keepAliveMs);
    // A keep-alive never holds the process open on its own.
    this.keepAlive.unref?.();
  }

  private wakeWaiters(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }

  private gone(): void {
    if (this.abort.signal.aborted) return;
    this.closed = true;
    clearTimeout(this.keepAlive);
    this.abort.abort(new Error("the client is gone"));
    this.wakeWaiters();
  }
}
