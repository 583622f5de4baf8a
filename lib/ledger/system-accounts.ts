/** The platform's fee account and the external-USDC contra account, created by the first migration. */
import "server-only";

export const PLATFORM_LEDGER_ACCOUNT_ID = "00000000-0000-4000-8000-000000000001";
export const EXTERNAL_LEDGER_ACCOUNT_ID = "00000000-0000-4000-8000-000000000002";
