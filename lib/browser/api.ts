/**
 * The dashboard's client for the svc API (same origin, session cookie). Every failure becomes an ApiError
 * carrying the API's error code, so components can say something human (lib/browser/errors.ts).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;
  readonly requestId: string | null;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}, requestId: string | null = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.requestId = requestId;
  }
}

type ApiInit = { method?: "GET" | "POST" | "PATCH" | "DELETE"; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal };

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
  throw await toApiError(res);
}

export async function api<T>(path: string, init: ApiInit = {}): Promise<T> {
  const res = await apiFetch(path, init);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export async function toApiError(res: Response): Promise<ApiError> {
  const requestId = res.headers.get("x-request-id");
  try {
    const body = (await res.json()) as { error?: { message?: string; code?: string } & Record<string, unknown> };
    if (body.error?.code) {
      const { message, code, type: _type, ...details } = body.error;
      return new ApiError(res.status, code, message ?? code, details, requestId);
    }
  } catch {
    // not JSON: a proxy or crash page
  }
  return new ApiError(res.status, res.status >= 500 ? "internal_error" : "http_error", `HTTP ${res.status}`, {}, requestId);
}
