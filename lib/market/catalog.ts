/**
 * The marketplace's model catalog: what buyers can name in `model`, and the list price that
 * meters capacity burn (micro-diem per 1M tokens; 1 diem = $1 of list-price inference).
 * Upserted at startup by `npm run dev` and the test setup (see prisma/seed.ts).
 */
export type CatalogModel = {
  id: string;
  name: string;
  inputMicroDiemPerMTok: bigint;
  outputMicroDiemPerMTok: bigint;
  contextTokens: number;
  maxOutputTokens: number;
  /** What the model can do (see lib/router/features.ts); offers serve at most this. */
  supportsTools: boolean;
  supportsJsonSchema: boolean;
  supportsVision: boolean;
};

export const CATALOG: readonly CatalogModel[] = [
  { id: "llama-3.3-70b", name: "Llama 3.3 70B", inputMicroDiemPerMTok: 700_000n, outputMicroDiemPerMTok: 2_800_000n, contextTokens: 131_072, maxOutputTokens: 8_192, supportsTools: true, supportsJsonSchema: true, supportsVision: false },
  { id: "qwen3-235b", name: "Qwen3 235B", inputMicroDiemPerMTok: 900_000n, outputMicroDiemPerMTok: 4_500_000n, contextTokens: 131_072, maxOutputTokens: 8_192, supportsTools: true, supportsJsonSchema: true, supportsVision: false },
  { id: "mistral-31-24b", name: "Mistral 3.1 24B", inputMicroDiemPerMTok: 500_000n, outputMicroDiemPerMTok: 2_000_000n, contextTokens: 131_072, maxOutputTokens: 8_192, supportsTools: true, supportsJsonSchema: true, supportsVision: true },
  { id: "venice-uncensored", name: "Venice Uncensored", inputMicroDiemPerMTok: 500_000n, outputMicroDiemPerMTok: 2_000_000n, contextTokens: 32_768, maxOutputTokens: 4_096, supportsTools: false, supportsJsonSchema: true, supportsVision: false },
];
