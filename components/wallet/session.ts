"use client";

import { useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useEffect, useSyncExternalStore } from "react";
import { isAddressEqual, type Address } from "viem";
import { useConnection, useDisconnect, useSignMessage } from "wagmi";
import type { SessionView } from "@/lib/auth/schemas";
import { api, ApiError, onSessionRejected } from "@/lib/browser/api";
import { signInWithWallet } from "@/lib/browser/sign-in";

export const SESSION_KEY = ["session"] as const;

/**
 * The session cookie is HttpOnly, so the page cannot see it. This hint (set when this browser signs in, cleared
 * on sign-out or a 401) says whether asking GET /auth/session is worth it: an anonymous visit asks nothing, so
 * it does not log a 401 on every page load. The server stays the judge: with the hint set, it still answers.
 */
const SESSION_HINT = "svc:session-hint";

function hasSessionHint(): boolean {
  try {
    return window.localStorage.getItem(SESSION_HINT) === "1";
  } catch {
    return true;
  }
}

function setSessionHint(on: boolean) {
  try {
    if (on) window.localStorage.setItem(SESSION_HINT, "1");
    else window.localStorage.removeItem(SESSION_HINT);
  } catch {
    // Storage unavailable: we simply keep asking the server.
  }
}

/**
 * The account whose session the server ended while this page was open (a 401 `session_required` on any call), or
 * null. The page then stays as it was, paused, with "Sign in again" (components/wallet/sign-in-gate.tsx), instead of
 * dropping what the user was doing; only a reload or an explicit sign-out forgets it.
 */
let endedAddress: string | null = null;
const endedListeners = new Set<() => void>();

function setEnded(address: string | null) {
  if (endedAddress === address) return;
  endedAddress = address;
  for (const listener of endedListeners) listener();
}

export function useEndedSession(): string | null {
  return useSyncExternalStore(
    (listener) => {
      endedListeners.add(listener);
      return () => endedListeners.delete(listener);
    },
    () => endedAddress,
    () => null,
  );
}

/** Mounted once (components/wallet/providers.tsx): a 401 from any call turns the page signed-out in place. */
export function useSessionWatcher() {
  const queryClient = useQueryClient();
  useEffect(
    () =>
      onSessionRejected(() => {
        const current = queryClient.getQueryData<SessionView | null>(SESSION_KEY);
        setSessionHint(false);
        if (!current) return;
        setEnded(current.address);
        queryClient.setQueryData(SESSION_KEY, null);
      }),
    [queryClient],
  );
}

const notSession = { predicate: (q: { queryKey: readonly unknown[] }) => q.queryKey[0] !== SESSION_KEY[0] };

/**
 * A new session: the same account as before keeps what the page shows and refreshes it (what failed with a 401 is
 * asked again); another account (or none before) starts from nothing, since whatever was cached was not its own.
 */
function adoptSession(queryClient: QueryClient, session: SessionView) {
  const previous = endedAddress ?? queryClient.getQueryData<SessionView | null>(SESSION_KEY)?.address ?? null;
  setSessionHint(true);
  setEnded(null);
  queryClient.setQueryData(SESSION_KEY, session);
  if (previous && isAddressEqual(previous as Address, session.address as Address)) void queryClient.invalidateQueries(notSession);
  else void queryClient.resetQueries(notSession);
}

/** The signed-in wallet (server-side session behind the HttpOnly cookie), or null. */
export function useSession() {
  return useQuery({
    queryKey: SESSION_KEY,
    queryFn: async (): Promise<SessionView | null> => {
      if (!hasSessionHint()) return null;
      try {
        return await api<SessionView>("/auth/session");
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) {
          setSessionHint(false);
          return null;
        }
        throw error;
      }
    },
    staleTime: 60_000,
  });
}

export function useSignIn() {
  const queryClient = useQueryClient();
  const { address } = useConnection();
  const { signMessageAsync } = useSignMessage();
  return useMutation({
    mutationFn: async () => {
      if (!address) throw new ApiError(0, "wallet_not_connected", "Connect your wallet first.");
      return signInWithWallet(address, (message) => signMessageAsync({ message }));
    },
    onSuccess: (session) => adoptSession(queryClient, session),
  });
}

export function useSignOut() {
  const queryClient = useQueryClient();
  const { disconnectAsync } = useDisconnect();
  return useMutation({
    mutationFn: async () => {
      await api("/auth/logout", { method: "POST" }).catch((error: unknown) => {
        // Already signed out server-side: that is the goal anyway.
        if (!(error instanceof ApiError && error.status === 401)) throw error;
      });
      await disconnectAsync().catch(() => undefined);
    },
    onSuccess: () => {
      setSessionHint(false);
      setEnded(null);
      queryClient.removeQueries(notSession);
      queryClient.setQueryData(SESSION_KEY, null);
    },
  });
}
