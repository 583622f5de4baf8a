import "server-only";
import { createHmac, randomBytes } from "node:crypto";
import { env } from "@/lib/env";
import { processState } from "@/lib/process-state";

/**
 * The fidelity probes, generated: each round draws, for each model, a fresh set of requests shaped like buyers' (the
 * router's wire: model, max_tokens, stream, messages, then the sampling fields buyers send), from templates x vocabulary
 * keyed by a private secret (PROBE_PROMPT_SECRET, else random per process) and the round. Nothing here is a prompt a
 * supplier could grep for: the strings are assembled at run time, the parameters drawn from buyer-plausible ranges, and
 * no field is fixed (no seed, no one temperature, no one max_tokens). Every offer of a model gets the same set in one
 * round, so their answers can be compared (consensus) and with the reference endpoint.
 *
 * What each probe lets svc decide without trusting the supplier:
 * - echo ("echo", "chat"): a generated code the answer must contain (`answer`); a buyer's stop sequence sometimes,
 *   which must not appear (`stop`). The "echo" probe is sent at temperature 0 (as many buyers send): its whole answer
 *   is compared across offers and with the reference. The "chat" probe has free sampling and is not compared.
 * - limit: a request for a long text under a small max_tokens; svc's count of the answer must stay within it
 *   (`max_tokens`). Not sent to models that bill reasoning (the cap then also covers hidden reasoning).
 * - json_schema / tool: a generated schema (field and tool names from the vocabulary); the answer or the named tool's
 *   arguments must satisfy it (`json_schema`, `tool_schema`).
 * To a model that bills hidden reasoning every probe asks for reasoning at PROBE_REASONING_EFFORT, so the reasoning an
 * offer claims is checked as a buyer's would be (lib/upstream/metering.ts). Usage claims are checked on every probe.
 */

export type ProbeKind = "text" | "limit" | "json_schema" | "tool";

type Message = { role: "system" | "user" | "assistant"; content: string };
type ToolSpec = { name: string; description: string; parameters: Record<string, unknown> };

export type ProbeDefinition = {
  /** The probe's place in its set (echo, chat, limit, json, tool): what the evidence names. */
  name: string;
  kind: ProbeKind;
  messages: Message[];
  /** Sampling as a buyer sends it; undefined fields are not sent. */
  temperature?: number;
  topP?: number;
  stop?: string[];
  /** The visible cap asked for; undefined: none sent (the model's output cap is forwarded, as for a buyer). */
  maxTokens?: number;
  /** Text the answer must contain (echo probes). */
  expect?: string;
  /** Whether offers' answers are compared with one another and with the reference (deterministic sampling). */
  compare: boolean;
  /** The schema the answer (json_schema) or the named tool's arguments (tool) must satisfy. */
  schema?: Record<string, unknown>;
  schemaName?: string;
  toolName?: string;
  tools?: ToolSpec[];
  toolChoice?: "required" | "named";
};

/** The effort a probe asks for on a model that bills reasoning: the least that asks for any. */
export const PROBE_REASONING_EFFORT = "low";
/** The limit probe's max_tokens range (a buyer asking for a short reply). */
export const LIMIT_MAX_TOKENS = { min: 16, max: 48 } as const;

/** The secret the probes are drawn from: PROBE_PROMPT_SECRET, or random per process (set it to share across a fleet). */
const secret = () => processState("probe-prompt-secret", () => env.PROBE_PROMPT_SECRET ?? randomBytes(32).toString("hex"));

/** A deterministic stream of choices from HMAC(secret, key): the same key draws the same set. */
class Draw {
  private block = Buffer.alloc(0);
  private at = 0;
  private counter = 0;
  constructor(private readonly key: string) {}

  private byte(): number {
    if (this.at >= this.block.length) {
      this.block = createHmac("sha256", secret()).update(`${this.key}\n${this.counter++}`).digest();
      this.at = 0;
    }
    return this.block[this.at++];
  }
  /** An integer in [0, n). */
  int(n: number): number {
    const v = (this.byte() << 16) | (this.byte() << 8) | this.byte();
    return v % n;
  }
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  chance(percent: number): boolean {
    return this.int(100) < percent;
  }
}

// ─── vocabulary ────────────────────────────────────────────────────────────────────────────────────────────────
const LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ";
const DIGITS = "23456789";
const FIRST_NAMES = [
  "Ana",
  "Ben",
  "Chloe",
  "Dmitri",
  "Elif",
  "Farah",
  "Goran",
  "Hana",
  "Ivo",
  "Jun",
  "Kemal",
  "Lina",
  "Mateo",
  "Nadia",
  "Omar",
  "Priya",
  "Quinn",
  "Rosa",
  "Sven",
  "Tariq",
  "Uma",
  "Viktor",
  "Wen",
  "Yara",
  "Zoe",
];
const CITIES = [
  "Lisbon",
  "Oslo",
  "Nairobi",
  "Lima",
  "Osaka",
  "Krakow",
  "Austin",
  "Porto",
  "Hanoi",
  "Tunis",
  "Quito",
  "Bergen",
  "Leeds",
  "Adelaide",
  "Montreal",
  "Seville",
  "Gdansk",
  "Cebu",
  "Accra",
  "Tbilisi",
];
const PRODUCTS = [
  "headphones",
  "desk lamps",
  "running shoes",
  "notebooks",
  "coffee grinders",
  "phone cases",
  "backpacks",
  "monitors",
  "water bottles",
  "keyboards",
  "tea kettles",
  "bike lights",
];
const TOPICS = [
  "the history of the printing press",
  "how tides work",
  "why bread rises",
  "the water cycle",
  "how vaccines train the immune system",
  "the rules of chess",
  "how a bill becomes law",
  "the life cycle of stars",
  "how credit scores work",
  "the causes of inflation",
  "how solar panels generate power",
  "the migration of birds",
  "how compilers work",
  "the origins of jazz",
  "photosynthesis",
  "how earthquakes are measured",
];
const FORMS = ["essay", "detailed explanation", "long blog post", "thorough overview", "step-by-step guide", "story"];
const CODE_LABELS = [
  "confirmation code",
  "order number",
  "reference",
  "ticket ID",
  "tracking number",
  "booking reference",
  "invoice number",
  "voucher code",
];
const SYSTEM_PROMPTS = [
  "You are a helpful assistant.",
  "You are a concise assistant. Keep answers short.",
  "You are a customer support agent for an online store.",
  "You are an assistant embedded in a productivity app. Answer precisely.",
  "You are a friendly assistant. Follow the user's formatting instructions exactly.",
  "You help developers test their integrations.",
];
const STOPS = [["\n\n\n"], ["###"], ["</answer>"], ["\nUser:"], ["<|end|>"], ["\n\nHuman:"]];
const TEMPERATURES = [0.2, 0.3, 0.5, 0.6, 0.7, 0.7, 0.8, 1];
const MAX_TOKENS = [256, 300, 400, 500, 512, 800, 1000, 1024, 1500, 2000, 2048];

function code(d: Draw): string {
  const chars = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[d.int(alphabet.length)]).join("");
  const mixed = LETTERS + DIGITS;
  switch (d.int(4)) {
    case 0:
      return `${chars(mixed, 4)}-${chars(mixed, 4)}`;
    case 1:
      return `${chars(LETTERS, 3)}-${chars(DIGITS, 5)}`;
    case 2:
      return `${chars(LETTERS, 2)}${chars(DIGITS, 6)}`;
    default:
      return `${chars(mixed, 3)}${chars(DIGITS, 3)}${chars(LETTERS, 2)}`;
  }
}

/** Requests that put the code first (an upstream quoting the request keeps it), with varied wording. */
const ECHO_TEMPLATES: ((label: string, c: string) => string)[] = [
  (l, c) => `My ${l} is ${c}. Please repeat it back to me exactly, nothing else.`,
  (l, c) => `Repeat this ${l} exactly: ${c}`,
  (l, c) => `${c} is my ${l}. Can you echo it back so I know you got it? Reply with only the ${l}.`,
  (l, c) => `Copy this ${l} verbatim and reply with just it: ${c}`,
  (l, c) => `${l}: ${c}. Say it back to me exactly.`,
  (l, c) => `Here's the ${l}: ${c} - reply with the ${l} only.`,
  (l, c) => `I need you to confirm ${c} (my ${l}). Just write it back.`,
];

function preamble(d: Draw): Message[] {
  const messages: Message[] = [];
  if (d.chance(60)) messages.push({ role: "system", content: d.pick(SYSTEM_PROMPTS) });
  if (d.chance(35)) {
    const name = d.pick(FIRST_NAMES);
    messages.push({ role: "user", content: `Hi, I'm ${name} from ${d.pick(CITIES)}.` });
    messages.push({ role: "assistant", content: `Hello ${name}! How can I help you today?` });
  }
  return messages;
}

function sampling(d: Draw): Pick<ProbeDefinition, "temperature" | "topP" | "maxTokens" | "stop"> {
  return {
    temperature: d.chance(85) ? d.pick(TEMPERATURES) : undefined,
    topP: d.chance(20) ? d.pick([0.9, 0.95, 1]) : undefined,
    maxTokens: d.chance(85) ? d.pick(MAX_TOKENS) : undefined,
    stop: d.chance(30) ? d.pick(STOPS) : undefined,
  };
}

function echoProbe(d: Draw, name: string, deterministic: boolean): ProbeDefinition {
  const c = code(d);
  const params = sampling(d);
  return {
    name,
    kind: "text",
    messages: [...preamble(d), { role: "user", content: d.pick(ECHO_TEMPLATES)(d.pick(CODE_LABELS), c) }],
    ...params,
    ...(deterministic && { temperature: 0, topP: undefined }),
    expect: c,
    compare: deterministic,
  };
}

function limitProbe(d: Draw): ProbeDefinition {
  const topic = d.pick(TOPICS);
  const ask = d.pick([
    `Write a ${d.pick(FORMS)} about ${topic}.`,
    `Explain ${topic} in as much detail as you can.`,
    `Tell me everything you know about ${topic}, with examples.`,
  ]);
  return {
    name: "limit",
    kind: "limit",
    messages: [...preamble(d), { role: "user", content: ask }],
    temperature: d.chance(80) ? d.pick(TEMPERATURES) : undefined,
    maxTokens: d.between(LIMIT_MAX_TOKENS.min, LIMIT_MAX_TOKENS.max),
    compare: false,
  };
}

function jsonProbe(d: Draw): ProbeDefinition {
  const person = d.pick(FIRST_NAMES);
  const count = d.between(2, 40);
  const product = d.pick(PRODUCTS);
  const city = d.pick(CITIES);
  const [personKey, countKey, productKey, cityKey] = [
    d.pick(["customer", "customer_name", "buyer", "name"]),
    d.pick(["quantity", "count", "units", "qty"]),
    d.pick(["product", "item", "sku_name"]),
    d.pick(["city", "destination", "ship_to"]),
  ];
  const withCity = d.chance(50);
  const properties: Record<string, unknown> = {
    [personKey]: { type: "string" },
    [countKey]: { type: "integer" },
    [productKey]: { type: "string" },
    ...(withCity && { [cityKey]: { type: "string" } }),
  };
  const note = `${person} ordered ${count} ${product}${withCity ? `, shipping to ${city}` : ""}.`;
  const deterministic = d.chance(50);
  return {
    name: "json",
    kind: "json_schema",
    messages: [
      ...(d.chance(50) ? [{ role: "system" as const, content: "Extract structured data from the user's text." }] : []),
      {
        role: "user",
        content: d.pick([
          `Extract the order from this note: "${note}"`,
          `Parse this into JSON: ${note}`,
          `${note} Return the order details as JSON.`,
        ]),
      },
    ],
    ...sampling(d),
    ...(deterministic && { temperature: 0, topP: undefined }),
    stop: undefined,
    compare: deterministic,
    schema: { type: "object", properties, required: Object.keys(properties), additionalProperties: false },
    schemaName: d.pick(["order", "order_details", "extraction", "result", "parsed_order"]),
  };
}

const TOOL_FAMILIES: ((d: Draw) => { tool: ToolSpec; ask: string })[] = [
  (d) => {
    const city = d.pick(CITIES);
    const unit = d.pick(["celsius", "fahrenheit"]);
    return {
      tool: {
        name: d.pick(["get_weather", "get_current_weather", "weather_lookup", "fetch_weather"]),
        description: d.pick(["The current weather in a city", "Look up current weather conditions"]),
        parameters: {
          type: "object",
          properties: { [d.pick(["city", "location"])]: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
          additionalProperties: false,
        },
      },
      ask: d.pick([`What's the weather in ${city} right now, in ${unit}?`, `Check the weather for ${city} (${unit}).`]),
    };
  },
  (d) => {
    const id = code(d);
    return {
      tool: {
        name: d.pick(["get_order_status", "lookup_order", "track_order", "order_status"]),
        description: "Look up an order by its id",
        parameters: {
          type: "object",
          properties: { [d.pick(["order_id", "id", "order_number"])]: { type: "string" }, include_items: { type: "boolean" } },
          additionalProperties: false,
        },
      },
      ask: d.pick([`Where is my order ${id}?`, `Can you check the status of order ${id}, with its items?`]),
    };
  },
  (d) => {
    const [from, to] = [d.pick(CITIES), d.pick(CITIES)];
    return {
      tool: {
        name: d.pick(["search_flights", "find_flights", "flight_search"]),
        description: "Search flights between two cities",
        parameters: {
          type: "object",
          properties: {
            [d.pick(["origin", "from_city"])]: { type: "string" },
            [d.pick(["destination", "to_city"])]: { type: "string" },
            passengers: { type: "integer" },
          },
          additionalProperties: false,
        },
      },
      ask: `Find me flights from ${from} to ${to} for ${d.between(1, 4)} people.`,
    };
  },
];

function toolProbe(d: Draw): ProbeDefinition {
  const family = d.int(TOOL_FAMILIES.length);
  const { tool, ask } = TOOL_FAMILIES[family](d);
  tool.parameters.required = Object.keys(tool.parameters.properties as object);
  // Sometimes a second tool the answer must not call instead (buyers' agents send several).
  const decoy = d.chance(40) ? TOOL_FAMILIES[(family + 1) % TOOL_FAMILIES.length](d).tool : null;
  if (decoy) decoy.parameters.required = Object.keys(decoy.parameters.properties as object);
  const deterministic = d.chance(50);
  return {
    name: "tool",
    kind: "tool",
    messages: [...preamble(d), { role: "user", content: ask }],
    ...sampling(d),
    ...(deterministic && { temperature: 0, topP: undefined }),
    stop: undefined,
    compare: deterministic,
    schema: tool.parameters,
    toolName: tool.name,
    tools: decoy && decoy.name !== tool.name ? (d.chance(50) ? [tool, decoy] : [decoy, tool]) : [tool],
    toolChoice: decoy ? "named" : d.pick(["required", "named"] as const),
  };
}

/**
 * The probe set of `key` (a round and a model): echo, chat, limit (not for reasoning models), json and tool, each
 * drawn afresh. The same key draws the same set in this process (every offer of the model, and the reference).
 */
export function generateProbeSet(key: string, model: { billsReasoning: boolean }): ProbeDefinition[] {
  const d = new Draw(key);
  const set = [echoProbe(d, "echo", true), echoProbe(d, "chat", false)];
  if (!model.billsReasoning) set.push(limitProbe(d));
  set.push(jsonProbe(d), toolProbe(d));
  return set;
}

/** The probes an offer gets of its model's set: the text ones, plus what the offer serves of the rest. */
export function probesFor(set: ProbeDefinition[], features: { supportsJsonSchema: boolean; supportsTools: boolean }): ProbeDefinition[] {
  return set.filter((p) => (p.kind === "json_schema" ? features.supportsJsonSchema : p.kind === "tool" ? features.supportsTools : true));
}

/**
 * The chat request a probe sends upstream, for the upstream's own model name, in the router's forwarded shape (its
 * envelope first: model, max_tokens, stream; then the buyer's fields in lib/router/forwarded-fields.ts's order).
 * max_tokens here is the probe's ask (null: the model's cap); the round sets the forwarded one as the router does.
 */
export function probeRequest(
  probe: ProbeDefinition,
  upstreamModel: string,
  model: { billsReasoning: boolean } = { billsReasoning: false },
) {
  const tools = probe.kind === "tool" ? probe.tools! : null;
  return {
    model: upstreamModel,
    max_tokens: probe.maxTokens ?? (null as number | null),
    stream: false as const,
    messages: probe.messages,
    ...(probe.temperature !== undefined && { temperature: probe.temperature }),
    ...(probe.topP !== undefined && { top_p: probe.topP }),
    ...(probe.stop !== undefined && { stop: probe.stop }),
    ...(tools && {
      tools: tools.map((t) => ({
        type: "function" as const,
        function: { name: t.name, description: t.description, parameters: t.parameters, strict: true },
      })),
      tool_choice:
        probe.toolChoice === "required" ? ("required" as const) : { type: "function" as const, function: { name: probe.toolName! } },
    }),
    ...(probe.kind === "json_schema" && {
      response_format: {
        type: "json_schema" as const,
        json_schema: { name: probe.schemaName ?? "result", schema: probe.schema!, strict: true },
      },
    }),
    ...(model.billsReasoning && { reasoning_effort: PROBE_REASONING_EFFORT }),
  };
}

export type ProbeRequest = ReturnType<typeof probeRequest>;
