/**
 * Output: with --json, stdout carries exactly one JSON document (the result, or {"error":…}); without it,
 * results go to stdout as text. Progress notes always go to stderr, so they never mix into a result.
 */
import type { CliError } from "./errors";

export type Output = {
  json: boolean;
  /** A progress line for humans (stderr; silent with --json). */
  note(text: string): void;
  /** The command's result. */
  result(human: string, data: unknown): void;
  failure(error: CliError): void;
};

export function createOutput(json: boolean): Output {
  return {
    json,
    note(text) {
      if (!json) process.stderr.write(`${text}\n`);
    },
    result(human, data) {
      process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
    },
    failure(error) {
      if (json) {
        const body = { error: { code: error.code, message: error.message, exit_code: error.exitCode, ...error.details } };
        process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
      } else {
        process.stderr.write(`error: ${error.message}\n`);
      }
    },
  };
}

/** "12.500000" → "12.50" for reading; amounts in --json stay exactly as the API sent them. */
export function usd(amount: string | null | undefined): string {
  if (amount === null || amount === undefined) return "?";
  const match = /^(-?\d+)\.(\d{2})(\d*)$/.exec(amount);
  if (!match) return amount;
  return /[1-9]/.test(match[3]) ? amount.replace(/0+$/, "") : `${match[1]}.${match[2]}`;
}
