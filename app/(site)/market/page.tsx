import type { Metadata } from "next";
import MarketOverviewPage from "@/app/page";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Market" };

// GET /market – the market index (the same overview as /: models, stats, recent trades); /market/{model} is one book
export default MarketOverviewPage;
