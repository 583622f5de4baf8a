import "server-only";
import { z } from "zod";
import { AppError } from "@/lib/errors";

/**
 * Cursor pagination for every list that pages (usage, ledger): the limits, the `?cursor=&limit=` query schema, and
 * opaque cursors. The domain functions that page use it, so it knows nothing of HTTP; the page envelope's schema is
 * pageOf in lib/wire.ts (client-safe: the dashboard reads pages too).
 */

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;

/** `?cursor=&limit=` for every paginated list: newest first, `next_cursor` null on the last page. */
export const PageQuery = z.strictObject({
  cursor: z.string().min(1).max(128).optional(),
  limit: z.coerce.number().int().min(1).max(PAGE_MAX).default(PAGE_DEFAULT),
});

/** An opaque cursor: the sort key of the last item of a page. */
export function encodeCursor(key: string): string {
  return Buffer.from(key).toString("base64url");
}

/** Decodes a cursor that must match `pattern`; anything else is an `invalid_request` naming the parameter. */
export function decodeCursor(cursor: string, pattern: RegExp): RegExpExecArray {
  const match = pattern.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) {
    throw new AppError("invalid_request", "Invalid query: cursor: use the next_cursor of a previous page.", {
      details: { param: "cursor" },
    });
  }
  return match;
}
