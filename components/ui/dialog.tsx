"use client";

import { useEffect, useId, useRef, type ReactNode } from "react";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { usePaused } from "@/components/ui/paused";
import { describeError } from "@/lib/browser/errors";

/**
 * A modal on the native <dialog> (focus trap, Escape and the top layer come from the browser). Its
 * accessible name is the title, so tests find it with getByRole("dialog", { name }).
 */
export function Dialog({
  open: wanted,
  onClose,
  title,
  description,
  children,
  className,
  onDismiss,
}: {
  open: boolean;
  onClose: () => void;
  /** Escape or a click on the backdrop; defaults to onClose. A dialog that must not be lost by accident guards here. */
  onDismiss?: () => void;
  title: string;
  description?: ReactNode;
  children: ReactNode;
  className?: string;
}) {
  // Inside paused content (the session ended) a dialog does not open, or closes, keeping its state for the resume.
  const paused = usePaused();
  const open = wanted && !paused;
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();

  const opener = useRef<HTMLElement | null>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
    }
    if (!open && dialog.open) {
      dialog.close();
      // The browser returns focus to the opener; when the opener is gone (a revoked key's button, a wallet
      // picked), focus the page's heading instead of letting it fall to <body>.
      const from = opener.current;
      requestAnimationFrame(() => {
        if (document.activeElement && document.activeElement !== document.body) return;
        if (from?.isConnected) return from.focus();
        const heading = document.querySelector<HTMLElement>("#main h1");
        if (heading) {
          heading.tabIndex = -1;
          heading.focus();
        }
      });
    }
  }, [open]);

  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      aria-describedby={description ? descriptionId : undefined}
      onCancel={(event) => {
        event.preventDefault();
        (onDismiss ?? onClose)();
      }}
      onClick={(event) => {
        if (event.target === ref.current) (onDismiss ?? onClose)();
      }}
      className={cn(
        "m-auto w-[calc(100%-2rem)] max-w-lg rounded-xl border border-zinc-200 bg-white p-0 text-zinc-900 shadow-xl backdrop:bg-zinc-950/50 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-100",
        className,
      )}
    >
      {/* Mounted while it is wanted, paused or not: a form whose state lives inside (an edit dialog) keeps what was
          typed while the session is renewed; the closed <dialog> hides it meanwhile. */}
      {wanted && (
        <div className="flex max-h-[85vh] flex-col gap-4 overflow-y-auto p-5">
          <div>
            <h2 id={titleId} className="text-lg font-semibold break-words">
              {title}
            </h2>
            {description && (
              <div id={descriptionId} className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
                {description}
              </div>
            )}
          </div>
          {children}
        </div>
      )}
    </dialog>
  );
}

/** A dialog's last rows: why its action failed (if it did), then Cancel beside the action, stacked on a phone. */
export function DialogActions({
  error,
  onCancel,
  cancelLabel = "Cancel",
  children,
}: {
  error: unknown;
  onCancel: () => void;
  cancelLabel?: string;
  children: ReactNode;
}) {
  return (
    <>
      {error ? <Alert tone="error">{describeError(error)}</Alert> : null}
      <div className="flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
        <Button variant="secondary" onClick={onCancel}>
          {cancelLabel}
        </Button>
        {children}
      </div>
    </>
  );
}
