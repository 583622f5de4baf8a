/**
 * Every route of the app, by OpenAPI path, with its module: the one list the API description (lib/openapi) is
 * assembled from. tests/integration/openapi.test.ts checks it against the route files on disk, so a route added
 * without an entry here fails there.
 *
 * GET /openapi.json is declared here, beside the list it describes, and app/openapi.json/route.ts exports it: so the
 * list holds that handler without importing the file that imports the list.
 */
import * as authLogout from "@/app/auth/logout/route";
import * as authNonce from "@/app/auth/nonce/route";
import * as authSession from "@/app/auth/session/route";
import * as authVerify from "@/app/auth/verify/route";
import * as healthLedger from "@/app/healthz/ledger/route";
import * as health from "@/app/healthz/route";
// In the document route's place among the routes: the document and the docs list component schemas in the order
// their modules load, and this one registers OpenApiDocument.
import { getOpenApiDocument, OpenApiDocumentSchema } from "@/lib/http/openapi/document";
import * as v1NotFound from "@/app/v1/[...path]/route";
import * as v2NotFound from "@/app/v2/[...path]/route";
import * as v2Chat from "@/app/v2/chat/completions/route";
import * as v2Responses from "@/app/v2/responses/route";
import * as v2Generation from "@/app/v2/generations/[id]/route";
import * as v2CurrentKey from "@/app/v2/key/route";
import * as v2Models from "@/app/v2/models/route";
import * as apiKey from "@/app/v1/account/api-keys/[id]/route";
import * as apiKeys from "@/app/v1/account/api-keys/route";
import * as balance from "@/app/v1/account/balance/route";
import * as ledger from "@/app/v1/account/ledger/route";
import * as ledgerExport from "@/app/v1/account/ledger/export/route";
import * as account from "@/app/v1/account/route";
import * as usageDaily from "@/app/v1/account/usage/daily/route";
import * as usageRefusals from "@/app/v1/account/usage/refusals/route";
import * as usage from "@/app/v1/account/usage/route";
import * as chat from "@/app/v1/chat/completions/route";
import * as generation from "@/app/v1/generations/[id]/route";
import * as currentKey from "@/app/v1/key/route";
import * as book from "@/app/v1/market/book/route";
import * as marketHistory from "@/app/v1/market/history/route";
import * as marketModels from "@/app/v1/market/models/route";
import * as modelOffers from "@/app/v1/market/models/[id]/offers/route";
import * as stats from "@/app/v1/market/stats/route";
import * as trades from "@/app/v1/market/trades/route";
import * as models from "@/app/v1/models/route";
import * as responses from "@/app/v1/responses/route";
import * as earnings from "@/app/v1/supply/earnings/route";
import * as earningsDaily from "@/app/v1/supply/earnings/daily/route";
import * as offer from "@/app/v1/supply/offers/[id]/route";
import * as offers from "@/app/v1/supply/offers/route";
import * as pool from "@/app/v1/supply/pool/summary/route";
import * as withdrawals from "@/app/v1/supply/withdrawals/route";
import * as topUp from "@/app/v1/x402/top-up/route";
import * as topUpStatus from "@/app/v1/x402/top-up/[nonce]/route";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response, type ApiRoute } from "@/lib/http/openapi/operation";

export const openApiJson = {
  // GET /openapi.json – the OpenAPI 3.1 description of every route, generated from the routes' own schemas
  GET: route(
    {
      auth: "public",
      docs: {
        operationId: "getOpenApiDocument",
        tag: "Operations",
        summary: "This OpenAPI 3.1 description",
        responses: [response(200, OpenApiDocumentSchema, "The document.")],
      },
    },
    async () => ok(getOpenApiDocument(API_ROUTES), { "cache-control": "public, max-age=300" }),
  ),
};

export const API_ROUTES: readonly ApiRoute[] = [
  { path: "/auth/nonce", module: authNonce },
  { path: "/auth/verify", module: authVerify },
  { path: "/auth/session", module: authSession },
  { path: "/auth/logout", module: authLogout },
  { path: "/v1/account", module: account },
  { path: "/v1/account/balance", module: balance },
  { path: "/v1/account/api-keys", module: apiKeys },
  { path: "/v1/account/api-keys/{id}", module: apiKey },
  { path: "/v1/account/ledger", module: ledger },
  { path: "/v1/account/ledger/export", module: ledgerExport },
  { path: "/v1/account/usage", module: usage },
  { path: "/v1/account/usage/daily", module: usageDaily },
  { path: "/v1/account/usage/refusals", module: usageRefusals },
  { path: "/v1/x402/top-up", module: topUp },
  { path: "/v1/x402/top-up/{nonce}", module: topUpStatus },
  { path: "/v1/chat/completions", module: chat },
  { path: "/v1/responses", module: responses },
  { path: "/v1/generations/{id}", module: generation },
  { path: "/v1/key", module: currentKey },
  { path: "/v1/models", module: models },
  { path: "/v1/market/book", module: book },
  { path: "/v1/market/models", module: marketModels },
  { path: "/v1/market/models/{id}/offers", module: modelOffers },
  { path: "/v1/market/stats", module: stats },
  { path: "/v1/market/history", module: marketHistory },
  { path: "/v1/market/trades", module: trades },
  { path: "/v1/supply/pool/summary", module: pool },
  { path: "/v1/supply/offers", module: offers },
  { path: "/v1/supply/offers/{id}", module: offer },
  { path: "/v1/supply/earnings", module: earnings },
  { path: "/v1/supply/earnings/daily", module: earningsDaily },
  { path: "/v1/supply/withdrawals", module: withdrawals },
  { path: "/v2/chat/completions", module: v2Chat },
  { path: "/v2/responses", module: v2Responses },
  { path: "/v2/generations/{id}", module: v2Generation },
  { path: "/v2/key", module: v2CurrentKey },
  { path: "/v2/models", module: v2Models },
  { path: "/healthz", module: health },
  { path: "/healthz/ledger", module: healthLedger },
  { path: "/openapi.json", module: openApiJson },
  { path: "/v1/{path}", module: v1NotFound, catchAll: true },
  { path: "/v2/{path}", module: v2NotFound, catchAll: true },
];
