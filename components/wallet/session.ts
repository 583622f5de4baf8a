"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useConnection, useDisconnect, useSignMessage } from "wagmi";
import type { SessionView } from "@/lib/auth/schemas";
import { api, ApiError } from "@/lib/browser/api";
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
    onSuccess: async (session) => {
      setSessionHint(true);
      // Whatever was cached belonged to the previous account (or to nobody).
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== SESSION_KEY[0] });
      queryClient.setQueryData(SESSION_KEY, session);
    },
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
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== SESSION_KEY[0] });
      queryClient.setQueryData(SESSION_KEY, null);
    },
  });
}
