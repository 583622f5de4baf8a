import type { Metadata } from "next";
import { DelistedOffers } from "@/components/supply/delisted-offers";
import { OfferForm } from "@/components/supply/offer-form";
import { OffersList } from "@/components/supply/offers-list";
import { SupplierNamePanel } from "@/components/supply/supplier-name";

export const metadata: Metadata = { title: "Supply" };

export default function SupplyPage() {
  return (
    <div className="flex flex-col gap-6">
      <OffersList />
      <DelistedOffers />
      <OfferForm />
      <SupplierNamePanel />
    </div>
  );
}
