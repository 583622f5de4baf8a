"use client";

import { createContext, useContext, useEffect, useRef, type ReactNode } from "react";

const PausedContext = createContext(false);

/** Whether the content around this component is paused (see Paused): a dialog in it stays closed until it resumes. */
export function usePaused(): boolean {
  return useContext(PausedContext);
}

/**
 * Content kept on the page but out of reach while something else must happen first (the session ended: sign in
 * again). It stays mounted, so what was typed survives; `inert` takes it out of the tab order and away from the
 * pointer and assistive technology; an open dialog inside closes and reopens, as it was, on resume, and focus
 * goes back to where it was.
 */
export function Paused({ when, children }: { when: boolean; children: ReactNode }) {
  const lastFocused = useRef<HTMLElement | null>(null);
  const wasPaused = useRef(when);
  useEffect(() => {
    if (wasPaused.current === when) return;
    wasPaused.current = when;
    if (when) return;
    const target = lastFocused.current;
    requestAnimationFrame(() => {
      if (document.activeElement && document.activeElement !== document.body) return;
      if (target?.isConnected) target.focus();
    });
  }, [when]);
  return (
    <PausedContext.Provider value={when}>
      <div
        inert={when}
        data-paused={when || undefined}
        className={when ? "opacity-60" : undefined}
        onFocus={(event) => {
          if (event.target instanceof HTMLElement) lastFocused.current = event.target;
        }}
      >
        {children}
      </div>
    </PausedContext.Provider>
  );
}
