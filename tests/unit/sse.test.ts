import { describe, expect, it } from "vitest";
import { SseLimitError, SseParser, type SseItem, type SseOptions } from "@/lib/upstream/sse";

const BIG = 1 << 20;
const encode = (text: string) => new TextEncoder().encode(text);

/** Every item a body yields when it arrives in these pieces, the end included. */
function parse(pieces: Uint8Array[], options: Partial<SseOptions> = {}): SseItem[] {
  const parser = new SseParser({ maxLineBytes: BIG, maxEventBytes: BIG, ...options });
  const items: SseItem[] = [];
  for (const piece of pieces) items.push(...parser.push(piece));
  items.push(...parser.end());
  return items;
}

const event = (data: string, extra: { event?: string; id?: string } = {}): SseItem => ({
  type: "event",
  event: extra.event ?? "message",
  data,
  id: extra.id ?? "",
});

/** A stream with every feature the format has, its lines ended three ways, and text of 2, 3 and 4 UTF-8 bytes. */
const MIXED =
  "\uFEFF: hello\r\n" +
  "data: first\r\ndata: second\r\n\r\n" +
  "event: update\rdata:no space\rdata:  two spaces\r\r" +
  "id: 7\ndata: é 中 🇫🇷\ndata\n\n" +
  "retry: 1000\nunknown: x\n: ping\n\n" +
  'id: a\u0000b\ndata: {"x":1}\r\n\r\n' +
  "id\ndata: [DONE]\n\n";

const MIXED_EVENTS: SseItem[] = [
  { type: "comment", text: "hello" },
  event("first\nsecond"),
  event("no space\n two spaces", { event: "update" }),
  event("é 中 🇫🇷\n", { id: "7" }),
  { type: "comment", text: "ping" },
  event('{"x":1}', { id: "7" }),
  event("[DONE]"),
];

describe("the SSE parser", () => {
  it("reads the format's fields, comments and line ends (CRLF, LF, CR), dropping one BOM at the start", () => {
    expect(parse([encode(MIXED)], { comments: true })).toEqual(MIXED_EVENTS);
    expect(parse([encode(MIXED)])).toEqual(MIXED_EVENTS.filter((item) => item.type === "event"));
  });

  it("reads the same events wherever the bytes are cut: inside a CRLF, a UTF-8 sequence, the BOM, a field name", () => {
    const bytes = encode(MIXED);
    for (let a = 0; a <= bytes.length; a++) {
      const two = parse([bytes.subarray(0, a), bytes.subarray(a)], { comments: true });
      if (JSON.stringify(two) !== JSON.stringify(MIXED_EVENTS)) expect(two, `cut at ${a}`).toEqual(MIXED_EVENTS);
      for (let b = a; b <= bytes.length; b += 7) {
        const three = parse([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)], { comments: true });
        if (JSON.stringify(three) !== JSON.stringify(MIXED_EVENTS)) expect(three, `cut at ${a} and ${b}`).toEqual(MIXED_EVENTS);
      }
    }
    expect(
      parse(
        [...bytes].map((byte) => Uint8Array.of(byte)),
        { comments: true },
      ),
    ).toEqual(MIXED_EVENTS);
  });

  it("keeps a BOM that is not at the start, and text that only begins like a BOM", () => {
    expect(parse([encode("data: a\uFEFFb\n\n")])).toEqual([event("a\uFEFFb")]);
    expect(parse([encode("\uFEFF\uFEFFdata: x\n\n")])).toEqual([]); // the second BOM is part of a field name
    expect(parse([Uint8Array.of(0xef, 0xbb), encode("x\n")])).toEqual([]);
    expect(parse([Uint8Array.of(0xef)])).toEqual([]);
    expect(parse([encode("\uFEFF")])).toEqual([]);
  });

  it("reads bytes that are not UTF-8 as U+FFFD, and never mends a sequence across events", () => {
    expect(parse([Uint8Array.of(...encode("data: a"), 0xff, 0xe4, ...encode("\n\n"))])).toEqual([event("a\uFFFD\uFFFD")]);
  });

  it("dispatches only events with data, resets the event name after each, keeps the last id", () => {
    expect(parse([encode("event: lonely\n\ndata: x\n\nid: 3\n\ndata: y\n\n")])).toEqual([event("x"), event("y", { id: "3" })]);
    expect(parse([encode("data:\n\n")])).toEqual([event("")]);
  });

  it("keeps the extra fields asked for (llama.cpp's error:), on an event of their own", () => {
    const items = parse([encode('data: a\n\nerror: {"message":"boom"}\n\ndata: [DONE]\n\n')], { extraFields: ["error"] });
    expect(items).toEqual([event("a"), { ...event(""), extra: { error: '{"message":"boom"}' } }, event("[DONE]")]);
    expect(parse([encode('error: {"message":"boom"}\n\n')])).toEqual([]);
  });

  it("reads a last line and event that the stream ended before finishing (as OpenAI's SDKs do)", () => {
    expect(parse([encode("data: a\n\ndata: [DONE]")])).toEqual([event("a"), event("[DONE]")]);
    expect(parse([encode("data: a\r")])).toEqual([event("a")]);
    expect(parse([encode("data: a\ndata: b\n")])).toEqual([event("a\nb")]);
  });

  it("refuses a line over its limit as soon as it is seen, before the line ends", () => {
    const parser = new SseParser({ maxLineBytes: 16, maxEventBytes: BIG });
    expect(parser.push(encode("data: 0123456789\n"))).toEqual([]); // 16 bytes: at the limit
    expect(() => parser.push(encode("data: 01234567890"))).toThrow(SseLimitError);
    const drip = new SseParser({ maxLineBytes: 16, maxEventBytes: BIG });
    for (const byte of encode(": 34567890123456")) drip.push(Uint8Array.of(byte));
    expect(() => drip.push(encode("7"))).toThrow(expect.objectContaining({ limit: "line", max: 16 }));
  });

  it("refuses an event whose data lines together exceed its limit, however many lines it takes", () => {
    const parser = new SseParser({ maxLineBytes: BIG, maxEventBytes: 64 });
    const line = encode(`data: ${"x".repeat(20)}\n`); // 21 bytes of data each, with the newline that joins them
    parser.push(line);
    parser.push(line);
    parser.push(line);
    expect(() => parser.push(line)).toThrow(expect.objectContaining({ limit: "event", max: 64 }));
    // The limit is per event: many events of that size are fine.
    const events = new SseParser({ maxLineBytes: BIG, maxEventBytes: 64 });
    for (let i = 0; i < 1000; i++) expect(events.push(encode(`${new TextDecoder().decode(line)}\n`))).toHaveLength(1);
  });

  it("takes time linear in the bytes, however they are cut (a quadratic rescan took seconds here)", () => {
    // One long line arriving a byte at a time.
    const line = new Uint8Array(256 * 1024).fill(0x61);
    let started = performance.now();
    const parser = new SseParser({ maxLineBytes: BIG, maxEventBytes: BIG });
    parser.push(encode("data: "));
    for (let i = 0; i < line.length; i++) parser.push(line.subarray(i, i + 1));
    expect(parser.push(encode("\n\n"))).toEqual([event("a".repeat(line.length))]);
    expect(performance.now() - started).toBeLessThan(2_000);

    // Many short lines in one chunk, ended by LF only: the search for a CR must not start over at each line.
    const many = encode("data: x\n\n".repeat(100_000));
    started = performance.now();
    expect(parse([many])).toHaveLength(100_000);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
