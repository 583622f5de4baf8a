/**
 * One record per wallet in localStorage (keyed by `prefix` and the lower-cased address), for what a form must still
 * know after a reload: a payment sent whose answer was lost. Read back only when `valid` accepts it (storage is the
 * user's to edit); storage denied or full keeps nothing, and the page still asks svc while it is open.
 */
export function walletRecord<T extends { wallet: string }>(prefix: string, valid: (record: T) => boolean) {
  const storageKey = (wallet: string) => `${prefix}${wallet.toLowerCase()}`;
  return {
    save(record: T): void {
      try {
        localStorage.setItem(storageKey(record.wallet), JSON.stringify(record));
      } catch {
        // Storage full or denied.
      }
    },
    load(wallet: string): T | null {
      try {
        const record = JSON.parse(localStorage.getItem(storageKey(wallet)) ?? "null") as T | null;
        return record !== null && typeof record === "object" && valid(record) ? record : null;
      } catch {
        return null;
      }
    },
    clear(wallet: string): void {
      try {
        localStorage.removeItem(storageKey(wallet));
      } catch {
        // Nothing stored.
      }
    },
  };
}
