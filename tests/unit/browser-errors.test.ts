import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/browser/api";
import { describeError } from "@/lib/browser/errors";

/** The dashboard's sentences for errors (lib/browser/errors.ts): specific ones are never replaced by generic wording. */
describe("describeError", () => {
  it("keeps the page's own sentence for a wallet that changed accounts (issue 28, item 3)", () => {
    const message =
      "Top-ups are paid from the signed-in wallet 0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65; switch your wallet back to it (it is on 0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f). Nothing was signed.";
    expect(describeError(new ApiError(0, "wallet_account_changed", message))).toBe(message);
  });

  it("keeps the page's own sentence for a wallet without enough USDC", () => {
    const message = "Your wallet holds $2.00 USDC, less than $5.00. Nothing was signed.";
    expect(describeError(new ApiError(0, "wallet_insufficient_usdc", message))).toBe(message);
  });

  it("words a refused payment by its reason", () => {
    const error = new ApiError(402, "payment_invalid", "Payment verification failed: insufficient_funds", { reason: "insufficient_funds" });
    expect(describeError(error)).toBe("Your wallet doesn't hold enough USDC for this top-up.");
  });

  it("tells a signed-out user to sign in again, never to try again", () => {
    const text = describeError(new ApiError(401, "session_required", "Your session has expired or was signed out; sign in again."));
    expect(text).toMatch(/Sign in again/);
    expect(text).not.toMatch(/try again|session has ended/i);
  });
});
