"use client";

import { Button, ButtonLink } from "@/components/ui/button";

// Any rendering failure: a human message and a way out, never a stack trace.
export default function ErrorPage({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main className="mx-auto flex max-w-xl flex-col items-center gap-4 px-4 py-24 text-center">
      <h1 className="text-2xl font-semibold tracking-tight">Something went wrong</h1>
      <p className="text-zinc-600 dark:text-zinc-400">
        This page hit an unexpected problem. Try again; if it keeps happening, come back in a few minutes.
      </p>
      <div className="flex gap-2">
        <Button onClick={() => reset()}>Try again</Button>
        <ButtonLink href="/" variant="secondary">
          Back to the market
        </ButtonLink>
      </div>
    </main>
  );
}
