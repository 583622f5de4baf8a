/** The access classes, each with the operations in it: read from the OpenAPI document, i.e. from route() itself. */
import { operationAnchor } from "@/components/docs/anchors";
import { AuthBadge, MethodLabel } from "@/components/docs/operation-labels";
import { C } from "@/components/docs/code-block";
import { Card } from "@/components/ui/card";
import type { OpenApiDocument, OpenApiOperation } from "@/lib/http/openapi/document";

const CLASSES: { auth: OpenApiOperation["x-svc-auth"]; how: React.ReactNode }[] = [
  { auth: "public", how: <>No credentials. Market data, models, health, the sign-in nonce and verify.</> },
  {
    auth: "session",
    how: (
      <>
        The HttpOnly <C>svc_session</C> cookie from Sign-In with Ethereum (<C>GET /auth/nonce</C> → sign → <C>POST /auth/verify</C>); over
        https it is named <C>__Host-svc_session</C> (Secure, Path=/, no Domain), and either name is accepted. An API key sent here is
        refused with 401 <C>session_required</C>; mutations from another site with 403 <C>cross_site_request</C>. Requests are counted per
        client IP before the cookie is checked, writes also per account, and repeated bad credentials from one address turn into 429.
      </>
    ),
  },
  {
    auth: "bearer",
    how: (
      <>
        <C>Authorization: Bearer svc_…</C> from <C>POST /v1/account/api-keys</C>. A session cookie sent here is refused with 401{" "}
        <C>session_cookie_not_accepted</C>, so a browser session can never spend through the inference endpoint.
      </>
    ),
  },
  {
    auth: "key_or_session",
    how: (
      <>
        Reads of your own account that an agent and the dashboard both need (the balance, a generation&apos;s record): any live{" "}
        <C>Authorization: Bearer svc_…</C> key of the account (it wins when sent; a revoked one is 401 <C>invalid_api_key</C>), else the
        session cookie. Another account&apos;s record is a 404.
      </>
    ),
  },
];

export function AccessClasses({ doc }: { doc: OpenApiDocument }) {
  const ops = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ method, path, op: op! })));
  return (
    <div className="grid gap-3 md:grid-cols-2">
      {CLASSES.map(({ auth, how }) => (
        <Card key={auth} className="p-4">
          <AuthBadge auth={auth} />
          <p className="mt-2 text-xs text-zinc-600 dark:text-zinc-400">{how}</p>
          <ul className="mt-3 flex flex-col gap-1">
            {ops
              .filter((o) => o.op["x-svc-auth"] === auth && o.path !== "/v1/{path}")
              .map((o) => (
                <li key={`${o.method} ${o.path}`} className="flex items-center gap-2">
                  <MethodLabel method={o.method} />
                  <a href={`/docs/reference#${operationAnchor(o.op)}`} className="truncate font-mono text-xs hover:underline">
                    {o.path}
                  </a>
                </li>
              ))}
          </ul>
        </Card>
      ))}
    </div>
  );
}
