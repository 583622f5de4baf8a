/** The models an offer serves, as chips (the active offers' cards and the delisted list). */
export function ModelChips({ models }: { models: { id: string }[] }) {
  return (
    <div className="flex flex-wrap gap-1">
      {models.map((m) => (
        <span key={m.id} className="rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-xs dark:bg-zinc-800">
          {m.id}
        </span>
      ))}
    </div>
  );
}
