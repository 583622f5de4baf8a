import "server-only";
import { AppError } from "@/lib/errors";
import { countLedgerLines, readLedgerRows, toItem } from "@/lib/ledger/history";
import type { LedgerFilter } from "@/lib/ledger/schemas";

/**
 * The history as CSV: exactly what the ledger holds for a filter, one row per journal line, newest first, amounts as
 * the exact decimal strings of the API. Read in pages of EXPORT_PAGE lines as the client reads the stream, so memory
 * stays bounded; at most EXPORT_MAX_LINES lines (a wider range is refused before anything is sent: narrow it).
 */
export const EXPORT_MAX_LINES = 100_000;
const EXPORT_PAGE = 1_000;

export const LEDGER_CSV_COLUMNS = [
  "created_at",
  "entry_id",
  "kind",
  "ledger",
  "amount",
  "balance_after",
  "model",
  "offer",
  "transaction",
  "generation_id",
] as const;

/** A streamed CSV body for the filter; throws invalid_request before streaming when it holds too many lines. */
export async function exportLedgerCsv(ownerId: string, filter: LedgerFilter): Promise<ReadableStream<Uint8Array>> {
  if ((await countLedgerLines(ownerId, filter, EXPORT_MAX_LINES + 1)) > EXPORT_MAX_LINES) {
    throw new AppError(
      "invalid_request",
      `Invalid query: from: the range holds more than ${EXPORT_MAX_LINES} ledger lines; export a shorter range (from, to).`,
      { details: { param: "from" } },
    );
  }
  const encoder = new TextEncoder();
  let before: bigint | null = null;
  let header = true;
  let done = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (done) return controller.close();
      const rows = await readLedgerRows(ownerId, filter, { before, limit: EXPORT_PAGE, group: false });
      let text = header ? `${LEDGER_CSV_COLUMNS.join(",")}\r\n` : "";
      header = false;
      for (const row of rows) {
        const item = toItem(row);
        text += `${[
          item.created_at,
          item.id,
          item.kind,
          item.ledger,
          item.amount,
          item.balance_after,
          item.model,
          item.offer,
          item.transaction,
          item.generation_id,
        ]
          .map(csvField)
          .join(",")}\r\n`;
      }
      const last = rows.at(-1);
      if (rows.length < EXPORT_PAGE || !last) done = true;
      else before = last.line_id;
      controller.enqueue(encoder.encode(text));
    },
  });
}

/** RFC 4180: quoted when it holds a comma, quote or line break. */
function csvField(value: string | null): string {
  if (value === null) return "";
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}
