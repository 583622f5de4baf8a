"use client";

import { useSyncExternalStore } from "react";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";

/**
 * The notification area: money that moves while the user is elsewhere in the app (a top-up or withdrawal started on
 * one dashboard tab, finished after they moved to another) says how it ended here. A notice stays until dismissed:
 * nothing about money disappears on a timer. A notice with a `key` replaces the earlier one with that key (the
 * "in progress" notice becomes "done").
 */
export type Notice = { key: string; tone: "success" | "error" | "info"; title: string; body?: string };

let notices: (Notice & { id: number })[] = [];
/** The server has no notices: one constant array, as useSyncExternalStore needs a cached getServerSnapshot. */
const NO_NOTICES: typeof notices = [];
/** useSyncExternalStore's getServerSnapshot: the same array on every call (React errors on every page load otherwise). */
export const serverNotices = () => NO_NOTICES;
/** useSyncExternalStore's getSnapshot: the same array until a notice changes. */
export const currentNotices = () => notices;
let nextId = 1;
const listeners = new Set<() => void>();

function publish(next: typeof notices) {
  notices = next;
  for (const listener of listeners) listener();
}

export function notify(notice: Notice) {
  publish([...notices.filter((n) => n.key !== notice.key), { ...notice, id: nextId++ }]);
}

export function dismissNotice(key: string) {
  if (notices.some((n) => n.key === key)) publish(notices.filter((n) => n.key !== key));
}

function useNotices() {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    currentNotices,
    serverNotices,
  );
}

/** Mounted once, beside the page (components/wallet/providers.tsx). */
export function NotificationArea() {
  const list = useNotices();
  return (
    <section
      aria-label="Notifications"
      className="pointer-events-none fixed inset-x-3 bottom-3 z-40 flex flex-col items-stretch gap-2 sm:inset-x-auto sm:right-4 sm:bottom-4 sm:w-96"
    >
      {list.map((n) => (
        <div key={n.id} className="pointer-events-auto rounded-lg shadow-lg">
          <Alert
            tone={n.tone}
            title={n.title}
            actions={
              <Button size="sm" variant="secondary" onClick={() => dismissNotice(n.key)}>
                Dismiss
              </Button>
            }
          >
            {n.body}
          </Alert>
        </div>
      ))}
    </section>
  );
}
