"use client";

import {
  useMarketModels,
  useMarketStats,
  usePoolSummary,
  useTrades,
  type MarketModelList,
  type MarketStats,
  type PoolSummary,
  type TradeList,
} from "@/components/market/queries";
import { ModelsTable, PoolSummaryView, StatsRow, TradesTable } from "@/components/market/market-parts";
import { Panel } from "@/components/ui/card";
import { QueryState } from "@/components/ui/query-state";
import { LoadingRows } from "@/components/ui/skeleton";

export type MarketOverviewData = {
  models: MarketModelList | null;
  stats: MarketStats | null;
  pool: PoolSummary | null;
  trades: TradeList | null;
};

export function MarketOverview({ initial }: { initial: MarketOverviewData }) {
  const models = useMarketModels(initial.models);
  const stats = useMarketStats(initial.stats);
  const pool = usePoolSummary(initial.pool);
  const trades = useTrades(null, initial.trades);

  return (
    <div className="flex flex-col gap-6">
      {stats.data && pool.data ? (
        <StatsRow stats={stats.data} pool={pool.data} />
      ) : stats.isError || pool.isError ? null : (
        <LoadingRows label="Loading market statistics" rows={1} />
      )}
      <Panel
        title="Models"
        description="List price is what 1 diem buys at 100¢; the best price is the cheapest offer on the book right now."
        bodyClassName="pt-2 sm:pt-3"
      >
        <QueryState query={models} loadingLabel="Loading models" errorTitle="The market is unavailable right now">
          {(m) => <ModelsTable models={m} />}
        </QueryState>
      </Panel>
      <div className="grid gap-6 lg:grid-cols-5">
        <Panel title="Supply pool" description="Every active offer today (UTC)" className="lg:col-span-2">
          <QueryState query={pool} loadingLabel="Loading the supply pool" errorTitle="Couldn't load the supply pool">
            {(p) => <PoolSummaryView pool={p} />}
          </QueryState>
        </Panel>
        <Panel
          title="Recent trades"
          description="Completions as they clear; no identities"
          className="lg:col-span-3"
          bodyClassName="pt-2 sm:pt-3"
        >
          <QueryState query={trades} loadingLabel="Loading recent trades" errorTitle="Couldn't load recent trades">
            {(t) => <TradesTable trades={t.data} />}
          </QueryState>
        </Panel>
      </div>
    </div>
  );
}
