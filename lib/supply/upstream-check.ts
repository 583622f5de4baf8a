import "server-only";
import { AppError, type AppErrorCode } from "@/lib/errors";
import type { Features } from "@/lib/supply/features";
import type { OfferedModel } from "@/lib/supply/offer-models";
import type { PricingComparison, UpstreamPricingView } from "@/lib/supply/schemas";
import type { UpstreamPolicy } from "@/lib/upstream/ssrf";
import {
  listUpstreamModels,
  UpstreamError,
  type OfferCredentials,
  type Resolver,
  type UpstreamFeatures,
  type UpstreamPricing,
} from "@/lib/upstream/client";
import { formatListPrice } from "@/lib/wire";

/**
 * The upstream check an offer passes before it is listed (on posting, and on any change of URL, key or models):
 * GET {base}/models with the supplier's key, so an offer that cannot serve is refused, not listed. It answers the
 * upstream's prices next to our list prices, and the features the upstream serves per model.
 */

/** What posting or re-checking an offer can refuse with, when its upstream fails the check. */
export const UPSTREAM_CHECK_ERRORS = [
  "upstream_url_forbidden",
  "upstream_unreachable",
  "upstream_auth_failed",
  "upstream_model_missing",
] as const satisfies AppErrorCode[];

/** Test and dev seams: the SSRF policy and DNS resolver used for the upstream check. */
export type UpstreamCheckOptions = { policy?: UpstreamPolicy; resolver?: Resolver; timeoutMs?: number };

/**
 * GET {base}/models with the key: refuses an unreachable upstream, a refused key, or a missing model. Returns
 * the upstream's prices next to ours, and the features served per model: the catalog's, less any the
 * upstream says the model lacks (an upstream that says nothing is taken to serve what the model can do).
 */
export async function checkUpstream(
  credentials: OfferCredentials,
  models: OfferedModel[],
  options: UpstreamCheckOptions,
): Promise<{ pricing: UpstreamPricingView[]; served: Map<string, Features> }> {
  let result;
  try {
    result = await listUpstreamModels(credentials, {
      policy: options.policy,
      resolver: options.resolver,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    });
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    if (error.kind === "forbidden_address" || error.kind === "invalid_url") {
      throw new AppError("upstream_url_forbidden", error.message, { details: { param: "upstream_base_url" } });
    }
    throw new AppError("upstream_unreachable", `GET ${credentials.baseUrl}/models failed: ${error.message}`, {
      details: { param: "upstream_base_url" },
    });
  }
  if (!result.ok) {
    if (result.reason === "auth_failed") {
      throw new AppError(
        "upstream_auth_failed",
        `The upstream refused the API key (HTTP ${result.status} from GET ${credentials.baseUrl}/models).`,
        { details: { param: "upstream_api_key", upstream_status: result.status } },
      );
    }
    const what = result.reason === "bad_status" ? `answered HTTP ${result.status}` : "did not answer with a model list";
    throw new AppError("upstream_unreachable", `GET ${credentials.baseUrl}/models ${what}; is this an OpenAI-compatible base URL?`, {
      details: { param: "upstream_base_url", upstream_status: result.status },
    });
  }
  const served = new Map(result.models.map((m) => [m.id, m]));
  const missing = models.filter((m) => !served.has(m.upstreamModel));
  if (missing.length > 0) {
    const names = missing.map((m) => m.upstreamModel);
    throw new AppError(
      "upstream_model_missing",
      `The upstream does not list ${names.map((n) => `"${n}"`).join(", ")} in GET /models; name the upstream's own model id with {"id", "upstream_model"}.`,
      { details: { param: "models", missing_models: names } },
    );
  }
  const pricing = models.map((m) => {
    const upstream = served.get(m.upstreamModel)!.pricing;
    const list = { inputMicroDiemPerMTok: m.inputMicroDiemPerMTok, outputMicroDiemPerMTok: m.outputMicroDiemPerMTok };
    return {
      model: m.id,
      upstream_model: m.upstreamModel,
      list_price: formatListPrice(list),
      upstream_price: upstream ? formatListPrice(upstream) : null,
      comparison: comparePricing(upstream, list),
    };
  });
  const features = new Map(models.map((m) => [m.id, servedFeatures(m.features, served.get(m.upstreamModel)!.features)]));
  return { pricing, served: features };
}

/** What the model can do, less what the upstream says it lacks (silence keeps the feature). */
function servedFeatures(model: Features, says: UpstreamFeatures): Features {
  return {
    tools: model.tools && says.tools !== false,
    json_schema: model.json_schema && says.json_schema !== false,
    vision: model.vision && says.vision !== false,
  };
}

function comparePricing(upstream: UpstreamPricing | null, list: UpstreamPricing): PricingComparison {
  if (!upstream) return "unknown";
  const input = upstream.inputMicroDiemPerMTok - list.inputMicroDiemPerMTok;
  const output = upstream.outputMicroDiemPerMTok - list.outputMicroDiemPerMTok;
  if (input === 0n && output === 0n) return "same";
  if (input <= 0n && output <= 0n) return "upstream_lower";
  if (input >= 0n && output >= 0n) return "upstream_higher";
  return "mixed";
}
