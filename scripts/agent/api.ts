/** JSON over HTTP to the service, with the saved session cookie; error answers become explained CliErrors. */
import type { Config } from "./config";
import { ApiError, CliError, EXIT, explainApiError } from "./errors";
import type { SessionStore } from "./session-store";

export type Context = { config: Config; store: SessionStore; env: NodeJS.ProcessEnv };

const USER_AGENT = "svc-agent-cli/1";

export type ApiCall = { method?: string; body?: unknown; session?: boolean; headers?: Record<string, string> };

/** Calls `path` on the service; `session: true` sends the saved cookie (and forgets it when the server says it is dead). */
export async function callApi<T>(ctx: Context, path: string, call: ApiCall = {}): Promise<{ data: T; response: Response }> {
  const headers: Record<string, string> = { accept: "application/json", "user-agent": USER_AGENT, ...call.headers };
  if (call.body !== undefined) headers["content-type"] = "application/json";
  if (call.session) headers.cookie = ctx.store.requireSession(ctx.config.baseUrl).cookie;

  const response = await send(ctx, path, {
    method: call.method ?? "GET",
    headers,
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  });
  if (!response.ok) throw await apiFailure(ctx, response);
  const data = (response.status === 204 ? undefined : await response.json()) as T;
  return { data, response };
}

export function send(ctx: Context, path: string, init: RequestInit): Promise<Response> {
  return fetchOrExplain(ctx, `${ctx.config.baseUrl}${path}`, init);
}

/** fetch, with "cannot connect" said in words. */
export async function fetchOrExplain(ctx: Context, input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(input, init);
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new CliError(
      `Cannot reach ${ctx.config.baseUrl} (${cause}).${ctx.config.isLocal ? " Is `npm run dev` running?" : ""}`,
      EXIT.failure,
      "unreachable",
    );
  }
}

/** An error answer, explained; a dead session is also forgotten locally. */
export async function apiFailure(ctx: Context, response: Response): Promise<CliError> {
  const error = await ApiError.from(response);
  if (error.code === "session_required") ctx.store.forgetSession(ctx.config.baseUrl);
  return explainApiError(error);
}
