/**
 * How to read a chart's details, in the words of the pointer the reader has: hover and ←/→ with a mouse and a
 * keyboard, tap on a touch screen ((pointer: coarse), which phones and tablets match). Decided by CSS, so the server
 * markup is already right and nothing flashes after hydration.
 */
export function PointerHint({ fine, coarse }: { fine: string; coarse: string }) {
  return (
    <span className="text-zinc-600 dark:text-zinc-400">
      <span className="pointer-coarse:hidden" data-pointer="fine">
        {fine}
      </span>
      <span className="hidden pointer-coarse:inline" data-pointer="coarse">
        {coarse}
      </span>
    </span>
  );
}
