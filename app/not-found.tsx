import { ButtonLink } from "@/components/ui/button";

export default function NotFound() {
  return (
    <main className="mx-auto flex max-w-xl flex-col items-center gap-4 px-4 py-24 text-center">
      <p className="text-sm font-medium text-emerald-700">404</p>
      <h1 className="text-2xl font-semibold tracking-tight">This page doesn&apos;t exist</h1>
      <p className="text-zinc-600 dark:text-zinc-400">The link may be old, or the model may have left the catalog.</p>
      <ButtonLink href="/">Back to the market</ButtonLink>
    </main>
  );
}
