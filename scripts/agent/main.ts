/**
 * `npm run agent -- <command>`: svc's headless agent flow from a terminal or another program.
 * Reads its configuration from flags and the environment (scripts/ may; lib/ and app/ never do).
 */
import { parseArgs } from "node:util";
import type { Context } from "./api";
import { DEFAULT_RUN_PROMPT, runCommand, type Values } from "./commands";
import { DEFAULT_BASE_URL, DEFAULT_SESSION_FILE, resolveConfig } from "./config";
import { CliError, EXIT } from "./errors";
import { createOutput } from "./output";
import { SessionStore } from "./session-store";

const HELP = `svc agent CLI: sign in with a wallet, fund the balance over x402, create API keys and call the API.

Usage: npm run agent -- <command> [options]

Commands
  login                         Sign in (SIWE): GET /auth/nonce, sign the EIP-4361 message, POST /auth/verify.
                                The svc_session cookie is kept in the session file (owner-only, 0600).
  topup <amount>                Fund the balance with <amount> USDC over x402 (402 → sign EIP-3009 → retry).
                                Checks the wallet's USDC on chain first.
  balance                       The prepaid balance: available, held, total (with the session; an API key can
                                read it too: GET /v1/account/balance with Authorization: Bearer).
  keys create [--name N] [--max-cents C] [--spend-limit USD] [--limit-reset daily|weekly|monthly]
                                Create an svc_ API key (shown once; saved for \`chat\`). With --limit-reset the
                                spend limit starts again each UTC day, week (from Monday) or month.
  keys list                     The account's keys (never their secrets), with each period's spend.
  keys edit <id> [--name N] [--max-cents C|none] [--spend-limit USD|none] [--limit-reset …|none]
                                Change a key; only what is given changes. A limit below what the period has
                                spent is accepted and stops the key until the reset.
  keys revoke <id>              Revoke a key.
  key [--api-key svc_…]         What the API key itself sees (GET /v1/key): its limit, what remains of it and
                                when it resets, its usage today, this week, this month and in all, its rate limit.
  chat "<prompt>" [--model M] [--max-cents C] [--max-tokens N] [--api-key svc_…] [--responses] [--stream]
       [--sort price|latency|throughput|quality] [--only ID,ID…]
                                One completion with the openai client at {base}/v1; prints the answer, then
                                its cost (usage.cost_details; --json has them all), price, burn, balance and
                                its generation id. --responses asks through POST /v1/responses (the Responses
                                API) instead of /v1/chat/completions: the same answer and cost, id resp_….
                                --stream prints the answer as it is generated (through /v2, stream: true); the
                                cost comes after it, from the stream's last usage.
                                --sort and --only send the request's provider object: the order offers are
                                tried in, and the offers (ids) or suppliers (sup_…) it may go to.
  generation <id> [--api-key svc_…]
                                A completion's record (GET /v1/generations/{id}): who served it, tokens billed
                                and claimed, charge, supplier share, fee, latency, key, journal entry. Uses the
                                API key (flag, SVC_API_KEY or the saved one), else the session.
  run ["<prompt>"]              The whole headless flow: login → top up if the balance is low → an API key
                                → one chat → what it cost. The key is the one saved for this base URL while it
                                is live; else run creates one with a daily spend limit of --key-limit USD and
                                saves it, so running it again makes no new key.
                                [--model M] [--max-cents C] [--max-tokens N (128)] [--min-balance USD (1.00)]
                                [--topup-amount USD (5.00)] [--key-limit USD (1.00)];
                                default prompt: "${DEFAULT_RUN_PROMPT}"

Options
  --base-url URL      The service (env SVC_BASE_URL; default ${DEFAULT_BASE_URL}). Non-local URLs must be https.
  --key-file FILE     File holding the wallet's private key (hex). Else env SVC_AGENT_PRIVATE_KEY.
  --rpc-url URL       Base RPC for reading the wallet's USDC (env SVC_RPC_URL; default http://127.0.0.1:8545
                      for a localhost base URL, else https://mainnet.base.org).
  --session-file F    Where the session and the last created key are kept (env SVC_AGENT_SESSION_FILE;
                      default ${DEFAULT_SESSION_FILE}, git-ignored).
  --max-cents C       The most to pay, cents per diem (1-10000; 100 = list price). On chat/run it is sent as
                      X-Svc-Max-Cents: it replaces the account's default and the platform's (100) for this
                      request, within the key's cap: a key with a max price refuses anything above it (400
                      max_price_above_key_cap, exit 2). On keys create/edit it sets that cap.
  --json              Machine output: exactly one JSON document on stdout (the result, or {"error":…}).
  -h, --help          This help.

Wallet key
  With nothing configured AND a localhost base URL, the CLI signs with anvil's first dev key, which
  \`npm run dev\` funds with 1,000,000 test USDC (a public test key). So against \`npm run dev\`:
      npm run agent -- run
  For any other base URL that key is refused: set SVC_AGENT_PRIVATE_KEY or pass --key-file.
  Against a localhost base URL (a dev deployment) only the local chain's funded dev accounts pay: its chain
  reuses Base's chain id and USDC contract, so a top-up signed there would be a valid payment on Base too.
  Never point the CLI at a dev deployment with a key that holds real funds.

Exit codes (by class, so a script can branch on them)
  0 ok
  1 failed: network, a server error (500), an unexpected answer
  2 usage: a bad command line or configuration, or a request the API refused as invalid (400, 404, 409,
    410, 413, 415, 422: the message names the field)
  3 auth: not signed in, session expired, API key missing, revoked or expired (401, 403)
  4 payment: not enough money: wallet USDC for a top-up, the balance or the key's spend limit (402)
  5 unavailable, retry later: no offer at your max price (503: the X-Svc-* headers are explained),
    the service unavailable (503), rate limited (429), the upstream failed (502)
`;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        "base-url": { type: "string" },
        "key-file": { type: "string" },
        "rpc-url": { type: "string" },
        "session-file": { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        name: { type: "string" },
        "max-cents": { type: "string" },
        "spend-limit": { type: "string" },
        "limit-reset": { type: "string" },
        model: { type: "string" },
        "max-tokens": { type: "string" },
        prompt: { type: "string" },
        "api-key": { type: "string" },
        "min-balance": { type: "string" },
        "topup-amount": { type: "string" },
        "key-limit": { type: "string" },
        responses: { type: "boolean" },
        stream: { type: "boolean" },
        sort: { type: "string" },
        only: { type: "string" },
      },
    });
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n\n${HELP}`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) {
    (values.help ? process.stdout : process.stderr).write(HELP);
    return values.help ? EXIT.ok : EXIT.usage;
  }

  const out = createOutput(values.json === true);
  try {
    // eslint-disable-next-line no-restricted-properties -- the CLI is a client: it reads its own SVC_* variables, not the server's
    const config = resolveConfig(values, process.env);
    // eslint-disable-next-line no-restricted-properties -- handed to the commands as their environment
    const ctx: Context = { config, store: new SessionStore(config.sessionFile), env: process.env };
    await runCommand(ctx, out, positionals, values as Values);
    return EXIT.ok;
  } catch (error) {
    const failure =
      error instanceof CliError
        ? error
        : new CliError(`Unexpected failure: ${(error as Error).stack ?? String(error)}`, EXIT.failure, "unexpected");
    out.failure(failure);
    return failure.exitCode;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
  // Keep-alive sockets or RPC clients must not hold a finished command open.
  setTimeout(() => process.exit(code), 2000).unref();
});
