import Link from "next/link";
import { listModels } from "@/lib/market/models";

export const dynamic = "force-dynamic";

function formatCents(cents: number | null) {
  return cents === null ? "—" : `${cents}¢ / diem`;
}

export default async function HomePage() {
  const models = await listModels().catch(() => null);

  return (
    <main className="mx-auto flex max-w-4xl flex-col gap-10 px-5 py-12 sm:py-20">
      <header className="flex flex-col gap-4">
        <p className="text-sm font-medium tracking-wide text-emerald-600 uppercase dark:text-emerald-400">svc</p>
        <h1 className="text-3xl font-semibold tracking-tight sm:text-5xl">The open inference marketplace</h1>
        <p className="max-w-2xl text-lg text-zinc-600 dark:text-zinc-400">
          Suppliers sell spare capacity on OpenAI-compatible providers. Buyers call one endpoint, pay per request
          from a USDC balance on Base, and always get the cheapest offer at or below their max price.
        </p>
      </header>

      <section aria-labelledby="models-heading" className="flex flex-col gap-3">
        <h2 id="models-heading" className="text-lg font-semibold">
          Models
        </h2>
        {models === null ? (
          <p role="alert" className="rounded-lg border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100">
            The market is unavailable right now. Check <Link className="underline" href="/healthz">/healthz</Link>.
          </p>
        ) : models.data.length === 0 ? (
          <p className="text-sm text-zinc-500">No models in the catalog yet.</p>
        ) : (
          <div className="overflow-x-auto rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
            <table className="w-full text-left text-sm">
              <thead className="border-b border-zinc-200 text-zinc-500 dark:border-zinc-800">
                <tr>
                  <th scope="col" className="px-4 py-2 font-medium">Model</th>
                  <th scope="col" className="px-4 py-2 font-medium">List price (diem / 1M tok, in · out)</th>
                  <th scope="col" className="px-4 py-2 font-medium">Best offer</th>
                  <th scope="col" className="px-4 py-2 font-medium">Offers</th>
                </tr>
              </thead>
              <tbody>
                {models.data.map((m) => (
                  <tr key={m.id} className="border-b border-zinc-100 last:border-0 dark:border-zinc-800">
                    <td className="px-4 py-2 font-mono">{m.id}</td>
                    <td className="px-4 py-2 tabular-nums">
                      {Number(m.pricing.input_diem_per_mtok).toFixed(2)} · {Number(m.pricing.output_diem_per_mtok).toFixed(2)}
                    </td>
                    <td className="px-4 py-2 tabular-nums">{formatCents(m.best_price_cents)}</td>
                    <td className="px-4 py-2 tabular-nums">{m.offers}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="api-heading" className="flex flex-col gap-3">
        <h2 id="api-heading" className="text-lg font-semibold">
          Use it from code
        </h2>
        <pre className="overflow-x-auto rounded-lg bg-zinc-900 p-4 text-sm text-zinc-100">
          <code>{`curl $SVC/v1/chat/completions \\
  -H "Authorization: Bearer svc_..." -H "Content-Type: application/json" \\
  -d '{"model":"llama-3.3-70b","messages":[{"role":"user","content":"Hello"}]}'`}</code>
        </pre>
      </section>
    </main>
  );
}
