/**
 * The routes the production front door serves itself (lib/http/front-door.ts `direct`): the same route() handlers
 * Next would run, without Next's per-request cost. The completion path, and the cached market reads: through Next a
 * read cost more CPU than the cached answer it serves, and under completions' load it queued behind them.
 */
import { POST as createChatCompletion } from "../app/v1/chat/completions/route";
import { GET as getBook } from "../app/v1/market/book/route";
import { GET as listMarketModels } from "../app/v1/market/models/route";
import { GET as getMarketStats } from "../app/v1/market/stats/route";
import { GET as listModels } from "../app/v1/models/route";

export const DIRECT_ROUTES = {
  "POST /v1/chat/completions": createChatCompletion,
  "GET /v1/models": listModels,
  "GET /v1/market/models": listMarketModels,
  "GET /v1/market/stats": getMarketStats,
  "GET /v1/market/book": getBook,
};
