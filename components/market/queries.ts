"use client";

import { useQuery } from "@tanstack/react-query";
import type {
  BookView,
  HistoryRange,
  MarketHistory,
  MarketModelList,
  MarketModelView,
  MarketStats,
  ModelOfferList,
  ModelOfferView,
  PoolSummary,
  TradeList,
  TradeView,
} from "@/lib/market/schemas";
import { api } from "@/lib/browser/api";

export type {
  BookView,
  HistoryRange,
  MarketHistory,
  MarketModelList,
  MarketModelView,
  MarketStats,
  ModelOfferList,
  ModelOfferView,
  PoolSummary,
  TradeList,
  TradeView,
};

const LIVE_MS = 5_000;

/** Public market data: server-rendered first (initial), then kept live by polling the public API. */
function useLive<T>(key: readonly unknown[], path: string, initial: T | null) {
  return useQuery({ queryKey: key, queryFn: () => api<T>(path), initialData: initial ?? undefined, refetchInterval: LIVE_MS });
}

export const useMarketModels = (initial: MarketModelList | null) => useLive(["market", "models"], "/v1/market/models", initial);
export const useMarketStats = (initial: MarketStats | null) => useLive(["market", "stats"], "/v1/market/stats", initial);
export const usePoolSummary = (initial: PoolSummary | null) => useLive(["market", "pool"], "/v1/supply/pool/summary", initial);
export const useTrades = (model: string | null, initial: TradeList | null) =>
  useLive(["market", "trades", model], `/v1/market/trades?limit=20${model ? `&model=${encodeURIComponent(model)}` : ""}`, initial);
export const useBook = (model: string, initial: BookView | null) =>
  useLive(["market", "book", model], `/v1/market/book?model=${encodeURIComponent(model)}`, initial);
export const useModelOffers = (model: string, initial: ModelOfferList | null) =>
  useLive(["market", "offers", model], `/v1/market/models/${encodeURIComponent(model)}/offers`, initial);
export const useMarketHistory = (model: string, range: HistoryRange) =>
  useQuery({
    queryKey: ["market", "history", model, range],
    queryFn: () => api<MarketHistory>(`/v1/market/history?model=${encodeURIComponent(model)}&range=${range}`),
    refetchInterval: 15_000,
  });
