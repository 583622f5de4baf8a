"use client";

import { isAddressEqual, type Address } from "viem";
import { useConnection } from "wagmi";
import { useSettings } from "@/components/wallet/providers";
import { useEndedSession, useSession } from "@/components/wallet/session";
import { useHydrated } from "@/components/wallet/use-hydrated";

/** Wallet connection, network and server session, combined into what the UI has to decide on. */
export function useWalletState() {
  const hydrated = useHydrated();
  const settings = useSettings();
  const connection = useConnection();
  const session = useSession();
  const connected = hydrated && connection.status === "connected" && !!connection.address;
  const wrongChain = connected && connection.chainId !== settings.chainId;
  const signedIn = !!session.data;
  const ended = useEndedSession();
  const mismatch = connected && signedIn && !isAddressEqual(connection.address!, session.data!.address as Address);
  return {
    hydrated,
    connected,
    connecting: connection.status === "connecting" || connection.status === "reconnecting",
    address: connected ? connection.address : undefined,
    chainId: connection.chainId,
    wrongChain,
    session,
    signedIn,
    /** The account whose session the server ended under this page (not signed in again since), or null. */
    endedAddress: signedIn ? null : ended,
    mismatch,
  };
}
