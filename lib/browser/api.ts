/**
 * The dashboard's client for the svc API (same origin, session cookie). Every failure becomes an ApiError
 * carrying the API's error code, so components can say something human (lib/browser/errors.ts).
 */
import { ApiError } from "@/lib/api-error";

export { ApiError };

type ApiInit = { method?: "GET" | "POST" | "PATCH" | "DELETE"; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal };

const sessionRejectedListeners = new Set<() => void>();

/**
 * Calls `listener` whenever the API answers 401 `session_required`: the server no longer knows this browser's
 * session (expired, signed out elsewhere). The page turns signed-out in place (components/wallet/session.ts).
 */
export function onSessionRejected(listener: () => void): () => void {
  sessionRejectedListeners.add(listener);
  return () => sessionRejectedListeners.delete(listener);
}

/** Sends a request; returns the raw Response for statuses the caller expects (e.g. 402), else throws. */
export async function apiFetch(path: string, init: ApiInit = {}, expect: number[] = []): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init.method ?? "GET",
      headers: { ...(init.body !== undefined && { "content-type": "application/json" }), ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      credentials: "same-origin",
      cache: "no-store",
      signal: init.signal,
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError(0, "network_error", "The request did not reach svc.");
  }
  if (res.ok || expect.includes(res.status)) return res;
  const error = await ApiError.from(res);
  if (error.code === "session_required") for (const listener of sessionRejectedListeners) listener();
  throw error;
}

export async function api<T>(path: string, init: ApiInit = {}): Promise<T> {
  const res = await apiFetch(path, init);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}
