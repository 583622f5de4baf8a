/**
 * An error answer of the svc API as a client sees it, for the dashboard (lib/browser) and the agent CLI alike:
 * the status, the API's `code`, its message, the machine-readable fields beside them, and the response headers
 * (X-Request-Id, the X-Svc-* explanation of a 503). Client-safe.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** The fields of `{"error":{…}}` other than message, type and code (e.g. `param`, `needed`, `reason`). */
  readonly details: Record<string, unknown>;
  readonly headers: Headers;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}, headers: Headers = new Headers()) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get requestId(): string | null {
    return this.headers.get("x-request-id");
  }

  /** Reads `{"error":{"message","type","code",…}}`; an answer in another shape (a proxy's page) keeps its text. */
  static async from(res: Response): Promise<ApiError> {
    const text = await res.text();
    let error: Record<string, unknown> = {};
    try {
      error = ((JSON.parse(text) as { error?: Record<string, unknown> }).error ?? {}) as Record<string, unknown>;
    } catch {
      // not our JSON error shape: keep the text
    }
    const { message, code, type: _type, ...details } = error;
    if (typeof code === "string") return new ApiError(res.status, code, typeof message === "string" ? message : code, details, res.headers);
    const fallback = res.status >= 500 ? "internal_error" : `http_${res.status}`;
    return new ApiError(res.status, fallback, text.slice(0, 300) || res.statusText || `HTTP ${res.status}`, {}, res.headers);
  }
}
