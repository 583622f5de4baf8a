/** The method and access-class labels of an operation, as the reference and the access classes page show them. */
import { Badge } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import type { OpenApiOperation } from "@/lib/http/openapi/document";

type Method = "get" | "post" | "put" | "patch" | "delete" | "head" | "options";

const METHOD_TONE: Record<Method, string> = {
  get: "bg-sky-100 text-sky-800 dark:bg-sky-950 dark:text-sky-300",
  post: "bg-emerald-100 text-emerald-800 dark:bg-emerald-950 dark:text-emerald-300",
  put: "bg-amber-100 text-amber-800 dark:bg-amber-950 dark:text-amber-300",
  patch: "bg-amber-100 text-amber-800 dark:bg-amber-950 dark:text-amber-300",
  delete: "bg-red-100 text-red-800 dark:bg-red-950 dark:text-red-300",
  head: "bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300",
  options: "bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300",
};

export function AuthBadge({ auth }: { auth: OpenApiOperation["x-svc-auth"] }) {
  if (auth === "session") return <Badge tone="amber">session cookie</Badge>;
  if (auth === "bearer") return <Badge tone="sky">Bearer svc_ key</Badge>;
  if (auth === "key_or_session") return <Badge tone="sky">Bearer svc_ key or session</Badge>;
  return <Badge tone="green">public</Badge>;
}

export function MethodLabel({ method }: { method: string }) {
  return (
    <span
      className={cn(
        "inline-block w-16 shrink-0 rounded px-1.5 py-0.5 text-center font-mono text-xs font-semibold uppercase",
        METHOD_TONE[method as Method],
      )}
    >
      {method}
    </span>
  );
}
