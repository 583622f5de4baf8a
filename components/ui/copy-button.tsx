"use client";

import { useEffect, useState } from "react";
import { Button } from "@/components/ui/button";

/** Copies `value`; says "Copied" for a moment (announced politely). */
export function CopyButton({
  value,
  label = "Copy",
  size = "sm",
  onCopied,
}: {
  value: string;
  label?: string;
  size?: "sm" | "md";
  onCopied?: () => void;
}) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = setTimeout(() => setState("idle"), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <Button
      variant="secondary"
      size={size}
      aria-label={label}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(value);
          setState("copied");
          onCopied?.();
        } catch {
          setState("failed");
        }
      }}
    >
      <span aria-live="polite">{state === "copied" ? "Copied" : state === "failed" ? "Select and copy" : "Copy"}</span>
    </Button>
  );
}
