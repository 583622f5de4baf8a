"use client";

import { useSwitchChain } from "wagmi";
import { Button } from "@/components/ui/button";
import { useSettings } from "@/components/wallet/providers";
import { describeError } from "@/lib/browser/errors";

export function SwitchChainButton({ size = "md", label = "Switch to Base" }: { size?: "sm" | "md"; label?: string }) {
  const settings = useSettings();
  const switchChain = useSwitchChain();
  return (
    <div className="flex flex-col gap-1">
      <Button size={size} loading={switchChain.isPending} onClick={() => switchChain.mutate({ chainId: settings.chainId })}>
        {label}
      </Button>
      {switchChain.error && (
        <p role="alert" className="text-xs text-red-700 dark:text-red-300">
          {describeError(switchChain.error)}
        </p>
      )}
    </div>
  );
}
