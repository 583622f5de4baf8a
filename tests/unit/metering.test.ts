import { describe, expect, it } from "vitest";
import {
  allowedClaim,
  billingRules,
  DEFAULT_REASONING_BUDGET_TOKENS,
  defaultReasoningBudget,
  minCountAccepting,
  outputCap,
  plausibleReasoning,
  reasoningEffortOf,
  REASONING_TOKENS_PER_ANSWER_TOKEN,
  USAGE_TOLERANCE_FLOOR_TOKENS,
} from "@/lib/upstream/metering";

describe("the usage tolerance", () => {
  it("is proportional (nothing over 0, at most twice a short count, 25% over a long one), and counting stops where it accepts", () => {
    expect([0, 1, 8, 15, 16, 40, 64, 65, 1_000, 100_000].map(allowedClaim)).toEqual([0, 2, 16, 30, 32, 56, 80, 82, 1_250, 125_000]);
    for (let ours = 1; ours < 5_000; ours++) {
      expect(allowedClaim(ours)).toBeLessThanOrEqual(2 * ours);
      expect(allowedClaim(ours)).toBeGreaterThanOrEqual(ours + Math.min(ours, USAGE_TOLERANCE_FLOOR_TOKENS));
    }

    // Counting a reply stops at the least count whose tolerance accepts the claim, for any claim a supplier can send.
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const claims = [0, 1, 2, 3, 31, 32, 33, 80, 81, 2_147_483_648, Number.MAX_SAFE_INTEGER];
    for (let i = 0; i < 2_000; i++) claims.push(Math.floor(random() ** 4 * 1_000_000));
    for (const claim of claims) {
      const n = minCountAccepting(claim);
      expect(allowedClaim(n)).toBeGreaterThanOrEqual(claim);
      if (n > 0) expect(allowedClaim(n - 1)).toBeLessThan(claim);
    }
  });
});

describe("the reasoning budget", () => {
  const reasoningModel = { billsReasoning: true, maxOutputTokens: 8_192 };

  it("is reasoning.max_tokens, else max_completion_tokens, else the effort's default, far below a model's cap", () => {
    expect([
      defaultReasoningBudget("minimal"),
      defaultReasoningBudget("low"),
      defaultReasoningBudget("medium"),
      defaultReasoningBudget("high"),
    ]).toEqual([256, 512, DEFAULT_REASONING_BUDGET_TOKENS, 2_048]);
    const cases: [Record<string, unknown>, { budget: number | null; output: number | null }][] = [
      // Asked for by effort: the visible cap (or the model's) plus the default budget.
      [{ reasoning_effort: "high" }, { budget: 2_048, output: 8_192 + 2_048 }],
      [
        { reasoning_effort: "low", max_tokens: 100 },
        { budget: 512, output: 612 },
      ],
      // OpenRouter's object: the budget is its max_tokens, at effort medium unless it names one.
      [
        { reasoning: { max_tokens: 300 }, max_tokens: 100 },
        { budget: 300, output: 400 },
      ],
      [
        { reasoning: { effort: "minimal" }, max_tokens: 100 },
        { budget: 256, output: 356 },
      ],
      [{ reasoning: { enabled: true } }, { budget: 1_024, output: 8_192 + 1_024 }],
      // max_completion_tokens is the whole (visible and reasoning), and the budget when none is named.
      [
        { reasoning_effort: "high", max_completion_tokens: 700, max_tokens: 100 },
        { budget: 700, output: 700 },
      ],
      [
        { reasoning_effort: "high", max_completion_tokens: 700, reasoning: { max_tokens: 5_000 } },
        { budget: 700, output: 700 },
      ],
      [
        { reasoning_effort: "high", max_completion_tokens: 700, reasoning: { max_tokens: 200 } },
        { budget: 200, output: 700 },
      ],
      // Not asked for: no budget, the output as before.
      [{ max_tokens: 100 }, { budget: null, output: 100 }],
      [
        { reasoning_effort: "none", max_tokens: 100 },
        { budget: null, output: 100 },
      ],
      [{ reasoning: { enabled: false } }, { budget: null, output: null }],
    ];
    for (const [request, want] of cases) {
      const rules = billingRules(request, reasoningModel);
      expect({ budget: rules.reasoning?.budgetTokens ?? null, output: rules.requestedOutputTokens }, JSON.stringify(request)).toEqual(want);
      // Never more output than the model's cap, whatever the budget.
      expect(outputCap(reasoningModel, rules)).toBe(Math.min(want.output ?? 8_192, 8_192));
      // A model that does not bill reasoning: no budget, and the output the request names.
      const plain = billingRules(request, { billsReasoning: false, maxOutputTokens: 8_192 });
      expect(plain.reasoning).toBeNull();
      expect(plain.requestedOutputTokens).toBe((request.max_completion_tokens ?? request.max_tokens ?? null) as number | null);
    }
    expect(reasoningEffortOf({ reasoning: { max_tokens: 10 } })).toBe("medium");
    expect(reasoningEffortOf({})).toBeNull();
  });

  it("is plausible up to the effort's default for any answer, or 32 tokens a token of a longer one", () => {
    const rules = billingRules({ reasoning_effort: "high" }, reasoningModel).reasoning!;
    expect(plausibleReasoning(0, rules)).toBe(2_048);
    expect(plausibleReasoning(57, rules)).toBe(2_048);
    expect(plausibleReasoning(64, rules)).toBe(64 * REASONING_TOKENS_PER_ANSWER_TOKEN);
    expect(plausibleReasoning(1_000, rules)).toBe(32_000);
  });
});
