/**
 * The routes the production front door serves itself (lib/http/front-door.ts `direct`): the same route() handlers
 * Next would run, without Next's per-request cost. The completion path, and the cached market reads: through Next a
 * read cost more CPU than the cached answer it serves, and under completions' load it queued behind them.
 */
import { POST as createChatCompletion } from "../app/v1/chat/completions/route";
import { POST as createChatCompletionV2 } from "../app/v2/chat/completions/route";
import { POST as createResponseV2 } from "../app/v2/responses/route";
import { GET as getBook } from "../app/v1/market/book/route";
import { GET as listMarketModels } from "../app/v1/market/models/route";
import { GET as getMarketStats } from "../app/v1/market/stats/route";
import { GET as listModels } from "../app/v1/models/route";

export const DIRECT_ROUTES = {
  "POST /v1/chat/completions": createChatCompletion,
  // The streaming surface: a stream's body is written by the front door itself, with backpressure (node-adapter.ts).
  "POST /v2/chat/completions": createChatCompletionV2,
  "POST /v2/responses": createResponseV2,
  "GET /v1/models": listModels,
  "GET /v1/market/models": listMarketModels,
  "GET /v1/market/stats": getMarketStats,
  "GET /v1/market/book": getBook,
};
