"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useConnection, useDisconnect, useSignMessage } from "wagmi";
import type { SessionView } from "@/lib/auth/schemas";
import { api, ApiError } from "@/lib/browser/api";
import { signInWithWallet } from "@/lib/browser/sign-in";

export const SESSION_KEY = ["session"] as const;

/** The signed-in wallet (server-side session behind the HttpOnly cookie), or null. */
export function useSession() {
  return useQuery({
    queryKey: SESSION_KEY,
    queryFn: async (): Promise<SessionView | null> => {
      try {
        return await api<SessionView>("/auth/session");
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return null;
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
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== SESSION_KEY[0] });
      queryClient.setQueryData(SESSION_KEY, null);
    },
  });
}
