import "server-only";

/**
 * Server-Sent Events, read incrementally: bytes in as the socket delivers them, events out as each completes
 * (the WHATWG event-stream format, https://html.spec.whatwg.org/multipage/server-sent-events.html).
 *
 * - A line ends at CRLF, LF or CR, wherever the bytes were cut (a CR ending one chunk and an LF starting the next are one
 *   line end). Lines are cut on bytes and decoded whole, so a cut inside a UTF-8 sequence changes nothing; bytes that
 *   are not UTF-8 read as U+FFFD. One BOM at the very start of the stream is dropped, even when cut.
 * - `data` lines of one event are joined with "\n"; `event` names it ("message" when unnamed); `id` sets the last event
 *   id (kept across events, ignored when it holds a NUL); `retry` is ignored (nothing here reconnects). A comment
 *   (a line starting with ":") is surfaced when asked for, else skipped. An event is dispatched at a blank line when
 *   it has data. Fields the format does not define are ignored, except the ones asked for (`extraFields`: llama.cpp
 *   wrote a failure as an `error:` line); an event with one of them is dispatched even without data.
 * - At the end of the stream a last line without its line end, and an event without its blank line, are still read
 *   (the format drops them; OpenAI's SDKs read them, and a server that ends on `data: [DONE]` without a newline is
 *   not broken).
 *
 * Bounded: a line longer than `maxLineBytes` or an event whose data (and extra fields) exceed `maxEventBytes` throws
 * SseLimitError as soon as it is seen, so what a supplier sends can never make us buffer more than those. Linear: every
 * byte is searched once for line ends (natively) and copied at most once, whatever the chunking.
 */

export type SseEvent = {
  type: "event";
  /** The `event` field, "message" when the event named none. */
  event: string;
  data: string;
  /** The last event id seen so far in the stream ("" before any). */
  id: string;
  /** The extra fields asked for that this event carried. */
  extra?: Record<string, string>;
};

export type SseComment = { type: "comment"; text: string };

export type SseItem = SseEvent | SseComment;

export type SseOptions = {
  maxLineBytes: number;
  maxEventBytes: number;
  /** Surface comment lines (keep-alives) as items; skipped otherwise. */
  comments?: boolean;
  /** Fields outside the format to keep on the event (their last value), e.g. llama.cpp's `error`. */
  extraFields?: readonly string[];
};

export class SseLimitError extends Error {
  constructor(
    readonly limit: "line" | "event",
    readonly max: number,
  ) {
    super(limit === "line" ? `An event-stream line exceeded ${max} bytes.` : `An event-stream event exceeded ${max} bytes.`);
    this.name = "SseLimitError";
  }
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const BOM = [0xef, 0xbb, 0xbf];

export class SseParser {
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  private readonly extraFields: ReadonlySet<string>;
  /** Bytes at the start of the stream held until it is known whether they are a BOM. */
  private head: Uint8Array | null = new Uint8Array(0);
  /** Pieces of the line being read, not yet ended. */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  /** The last chunk ended on a CR: an LF starting the next one belongs to that line end. */
  private afterCr = false;
  private data: string[] = [];
  private eventBytes = 0;
  private eventType = "";
  private extra: Record<string, string> | null = null;
  private lastId = "";

  constructor(private readonly options: SseOptions) {
    this.extraFields = new Set(options.extraFields ?? []);
  }

  /** Reads the next bytes of the stream; returns what they completed. */
  push(chunk: Uint8Array): SseItem[] {
    const out: SseItem[] = [];
    let bytes = chunk;
    if (this.head !== null) {
      const head = concat([this.head, chunk]);
      const prefix = head.subarray(0, BOM.length);
      const bom = prefix.every((byte, i) => byte === BOM[i]);
      if (bom && head.length < BOM.length) {
        this.head = head;
        return out;
      }
      this.head = null;
      bytes = bom ? head.subarray(BOM.length) : head;
    }
    this.scan(bytes, out);
    return out;
  }

  /** The stream ended: what its last bytes complete (see the top of this file). */
  end(): SseItem[] {
    const out: SseItem[] = [];
    if (this.head !== null && this.head.length > 0) this.scan(this.head, out);
    this.head = null;
    if (this.pending.length > 0) this.line(concat(this.pending), out);
    this.pending = [];
    this.pendingBytes = 0;
    this.dispatch(out);
    return out;
  }

  private scan(bytes: Uint8Array, out: SseItem[]): void {
    if (bytes.length === 0) return;
    let start = 0;
    if (this.afterCr) {
      this.afterCr = false;
      if (bytes[0] === LF) start = 1;
    }
    // Where the next CR and LF are, searched again only once passed: each byte is searched once.
    let nextLf = bytes.indexOf(LF, start);
    let nextCr = bytes.indexOf(CR, start);
    while (start < bytes.length) {
      if (nextLf !== -1 && nextLf < start) nextLf = bytes.indexOf(LF, start);
      if (nextCr !== -1 && nextCr < start) nextCr = bytes.indexOf(CR, start);
      const end = nextLf === -1 ? nextCr : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr);
      if (end === -1) {
        this.hold(bytes.subarray(start));
        return;
      }
      this.checkLine(end - start);
      const piece = bytes.subarray(start, end);
      const line = this.pending.length === 0 ? piece : concat([...this.pending, piece]);
      this.pending = [];
      this.pendingBytes = 0;
      this.line(line, out);
      start = end + 1;
      if (bytes[end] === CR) {
        if (start === bytes.length) this.afterCr = true;
        else if (bytes[start] === LF) start += 1;
      }
    }
  }

  private hold(rest: Uint8Array): void {
    if (rest.length === 0) return;
    this.checkLine(rest.length);
    this.pending.push(rest);
    this.pendingBytes += rest.length;
  }

  private checkLine(more: number): void {
    if (this.pendingBytes + more > this.options.maxLineBytes) throw new SseLimitError("line", this.options.maxLineBytes);
  }

  private line(line: Uint8Array, out: SseItem[]): void {
    if (line.length === 0) {
      this.dispatch(out);
      return;
    }
    if (line[0] === COLON) {
      if (this.options.comments) out.push({ type: "comment", text: this.decode(valueAfter(line, 0)) });
      return;
    }
    const colon = line.indexOf(COLON);
    const field = this.decode(colon === -1 ? line : line.subarray(0, colon));
    const value = colon === -1 ? new Uint8Array(0) : valueAfter(line, colon);
    switch (field) {
      case "data":
        this.grow(value.length + 1);
        this.data.push(this.decode(value));
        return;
      case "event":
        this.eventType = this.decode(value);
        return;
      case "id": {
        const id = this.decode(value);
        if (!id.includes("\u0000")) this.lastId = id;
        return;
      }
      default:
        if (this.extraFields.has(field)) {
          this.grow(value.length);
          (this.extra ??= {})[field] = this.decode(value);
        }
    }
  }

  private grow(bytes: number): void {
    this.eventBytes += bytes;
    if (this.eventBytes > this.options.maxEventBytes) throw new SseLimitError("event", this.options.maxEventBytes);
  }

  private dispatch(out: SseItem[]): void {
    if (this.data.length > 0 || this.extra !== null) {
      const event: SseEvent = { type: "event", event: this.eventType || "message", data: this.data.join("\n"), id: this.lastId };
      if (this.extra !== null) event.extra = this.extra;
      out.push(event);
    }
    this.data = [];
    this.eventBytes = 0;
    this.eventType = "";
    this.extra = null;
  }

  private decode(bytes: Uint8Array): string {
    return this.decoder.decode(bytes);
  }
}

/** A field's value: what follows the colon at `colon`, without one space after it. */
function valueAfter(line: Uint8Array, colon: number): Uint8Array {
  const from = line[colon + 1] === SPACE ? colon + 2 : colon + 1;
  return line.subarray(from);
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  return Buffer.concat(parts);
}
