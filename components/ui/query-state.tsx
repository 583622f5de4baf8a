"use client";

import type { ReactNode } from "react";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { LoadingRows } from "@/components/ui/skeleton";
import { ApiError } from "@/lib/browser/api";
import { describeError } from "@/lib/browser/errors";

/** A 401 `session_required`: not something "Try again" can fix; the page offers "Sign in again" (SignInGate). */
export function isSessionEnded(error: unknown): boolean {
  return error instanceof ApiError && error.code === "session_required";
}

type QueryLike<T> = { data: T | undefined; isPending: boolean; isError: boolean; error: unknown; refetch: () => unknown };

/** Loading rows, a human error with a retry, or the content: the same three states everywhere. */
export function QueryState<T>({
  query,
  loadingLabel,
  errorTitle,
  children,
}: {
  query: QueryLike<T>;
  loadingLabel: string;
  errorTitle: string;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <LoadingRows label={loadingLabel} />;
  if (isSessionEnded(query.error)) {
    // What was shown stays shown (the page is paused until the user signs in again, then it refreshes).
    if (query.data !== undefined) return <>{children(query.data)}</>;
    return (
      <Alert tone="info" title="Signed out">
        Sign in again to see this.
      </Alert>
    );
  }
  if (query.isError || query.data === undefined) {
    return (
      <Alert
        tone="error"
        title={errorTitle}
        actions={
          <Button variant="secondary" size="sm" onClick={() => query.refetch()}>
            Try again
          </Button>
        }
      >
        {describeError(query.error)}
      </Alert>
    );
  }
  return <>{children(query.data)}</>;
}

type PagedQueryLike = {
  hasNextPage: boolean;
  isFetchingNextPage: boolean;
  isFetchNextPageError: boolean;
  error: unknown;
  fetchNextPage: () => unknown;
};

/** The foot of a paged list: why the next page failed, and a button for the next page while there is one. */
export function LoadMore({ query }: { query: PagedQueryLike }) {
  return (
    <>
      {query.isFetchNextPageError && (
        <p role="alert" className="text-sm text-red-700">
          {describeError(query.error)}
        </p>
      )}
      {query.hasNextPage && (
        <div className="flex justify-center">
          <Button variant="secondary" loading={query.isFetchingNextPage} onClick={() => query.fetchNextPage()}>
            Load more
          </Button>
        </div>
      )}
    </>
  );
}
