export type ReferenceModel = {
  id: string;
  name: string;
  contextTokens: number;
  maxOutputTokens: number;
  /** USD per 1M input tokens, decimal string. 1 DIEM = $1, so the DIEM price is the same. */
  inputUsdPerMTok: string;
  /** USD per 1M output tokens, decimal string. */
  outputUsdPerMTok: string;
  /** Venice's `model_spec.capabilities`: what a request may use with this model. */
  supportsFunctionCalling: boolean;
  supportsResponseSchema: boolean;
  supportsVision: boolean;
};

export const REFERENCE_MODELS: readonly ReferenceModel[] = [
  {
    id: "llama-3.3-70b",
    name: "Llama 3.3 70B (reference)",
    contextTokens: 131072,
    maxOutputTokens: 8192,
    inputUsdPerMTok: "0.70",
    outputUsdPerMTok: "2.80",
    supportsFunctionCalling: true,
    supportsResponseSchema: true,
    supportsVision: false,
  },
  {
    id: "qwen3-235b",
    name: "Qwen3 235B (reference)",
    contextTokens: 131072,
    maxOutputTokens: 8192,
    inputUsdPerMTok: "0.90",
    outputUsdPerMTok: "4.50",
    supportsFunctionCalling: true,
    supportsResponseSchema: true,
    supportsVision: false,
  },
  {
    id: "mistral-31-24b",
    name: "Mistral 3.1 24B (reference)",
    contextTokens: 131072,
    maxOutputTokens: 8192,
    inputUsdPerMTok: "0.50",
    outputUsdPerMTok: "2.00",
    supportsFunctionCalling: true,
    supportsResponseSchema: true,
    supportsVision: true,
  },
  {
    id: "venice-uncensored",
    name: "Venice Uncensored (reference)",
    contextTokens: 32768,
    maxOutputTokens: 4096,
    inputUsdPerMTok: "0.50",
    outputUsdPerMTok: "2.00",
    supportsFunctionCalling: false,
    supportsResponseSchema: true,
    supportsVision: false,
  },
];
