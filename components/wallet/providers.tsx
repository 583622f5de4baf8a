"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import { WagmiProvider } from "wagmi";
import { NotificationArea } from "@/components/ui/notifications";
import { useSessionWatcher } from "@/components/wallet/session";
import { ApiError } from "@/lib/browser/api";
import { createWagmiConfig } from "@/lib/browser/wagmi-config";
import type { ClientSettings } from "@/lib/browser/settings";

const SettingsContext = createContext<ClientSettings | null>(null);

/** The deployment's settings, handed down from the root layout (a server component reading lib/env.ts). */
export function useSettings(): ClientSettings {
  const settings = useContext(SettingsContext);
  if (!settings) throw new Error("useSettings() outside <Providers>");
  return settings;
}

/**
 * Marks the document once React has hydrated it (`<html data-hydrated>`): from then on every button has its handler.
 * The browser tests wait for it after each navigation, so an interaction can never land on inert server markup.
 */
function HydrationMark() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  return null;
}

function SessionWatcher() {
  useSessionWatcher();
  return null;
}

export function Providers({ settings, children }: { settings: ClientSettings; children: ReactNode }) {
  const [config] = useState(() => createWagmiConfig(settings));
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: {
            staleTime: 2_000,
            // A 4xx will not fix itself by asking again; a network blip or a 5xx might.
            retry: (failures, error) => failures < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
          },
        },
      }),
  );
  return (
    <SettingsContext.Provider value={settings}>
      <WagmiProvider config={config}>
        <QueryClientProvider client={queryClient}>
          <HydrationMark />
          <SessionWatcher />
          {children}
          <NotificationArea />
        </QueryClientProvider>
      </WagmiProvider>
    </SettingsContext.Provider>
  );
}
