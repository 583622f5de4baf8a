import Link from "next/link";

export function SiteFooter() {
  return (
    <footer className="mt-16 border-t border-zinc-200 dark:border-zinc-800">
      <div className="mx-auto flex max-w-6xl flex-col gap-2 px-4 py-6 text-xs text-zinc-600 sm:flex-row sm:items-center sm:justify-between sm:px-6 dark:text-zinc-400">
        <p>svc: the open inference marketplace. Prices in USDC on Base; 1 diem = $1 of list-price inference per day.</p>
        <p className="flex gap-4">
          <Link className="hover:text-zinc-800 dark:hover:text-zinc-200" href="/docs">
            Docs
          </Link>
          <a className="hover:text-zinc-800 dark:hover:text-zinc-200" href="/openapi.json">
            OpenAPI
          </a>
          <Link className="hover:text-zinc-800 dark:hover:text-zinc-200" href="/v1/models">
            API: /v1/models
          </Link>
          <Link className="hover:text-zinc-800 dark:hover:text-zinc-200" href="/healthz">
            Status
          </Link>
        </p>
      </div>
    </footer>
  );
}
