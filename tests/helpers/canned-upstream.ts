/**
 * A real HTTP upstream whose chat answer the test chooses (status and body), recording what svc forwarded:
 * for what the reference upstream cannot produce (usage details, logprobs, refusals, 4xx, huge replies).
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type CannedAnswer = { status: number; body: unknown };
/** The answer to one request; a promise holds it until the test resolves it (a barrier, never a timer). */
type Answerer = CannedAnswer | ((body: Record<string, unknown>) => CannedAnswer | Promise<CannedAnswer>);

export type CannedUpstream = {
  url: string;
  apiKey: string;
  /** Every chat request received: its headers, raw size and parsed body. */
  received: { headers: IncomingHttpHeaders; bytes: number; body: Record<string, unknown> | null }[];
  answer: (next: Answerer) => void;
  stop: () => Promise<void>;
};

export async function startCannedUpstream(models: Record<string, unknown>[] = [{ id: "canned-model" }]): Promise<CannedUpstream> {
  let reply: Answerer = { status: 500, body: { error: { message: "no answer set" } } };
  const received: CannedUpstream["received"] = [];
  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const send = (status: number, body: unknown) => {
      const text = typeof body === "string" ? body : JSON.stringify(body);
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method === "GET" && req.url === "/v1/models") return send(200, { object: "list", data: models });
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") return send(404, { error: { message: "not found" } });
    let body: Record<string, unknown> | null;
    try {
      body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
    } catch {
      body = null;
    }
    received.push({ headers: req.headers, bytes: raw.length, body });
    const next = typeof reply === "function" ? await reply(body ?? {}) : reply;
    if (res.destroyed) return;
    send(next.status, next.body);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    apiKey: "canned-key",
    received,
    answer: (next) => {
      reply = next;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An OpenAI chat completion with the given message and usage. */
export function completion(message: Record<string, unknown>, usage?: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    id: "chatcmpl-upstream-own-id",
    object: "chat.completion",
    created: 1,
    model: "the-upstream-name",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: "stop", logprobs: null }],
    ...(usage && { usage }),
    ...extra,
  };
}
