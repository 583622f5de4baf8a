/**
 * What no field may hold is refused once, in the validation layer every body and query passes through, so each
 * route answers 400 (not 500) for it: a NUL character anywhere in string input, and an amount beyond the 64-bit
 * columns money is stored in.
 */
import { describe, expect, it } from "vitest";
import { POST as createKeyRoute } from "@/app/v1/account/api-keys/route";
import { GET as bookRoute } from "@/app/v1/market/book/route";
import { GET as tradesRoute } from "@/app/v1/market/trades/route";
import { POST as postOfferRoute } from "@/app/v1/supply/offers/route";
import { db } from "@/lib/db/client";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { buyerBalance, callCompletions, seedBuyer } from "../helpers/router-factories";

const NUL = "\u0000";

async function expect400(res: Response, code: string, param: string) {
  expect(res.status).toBe(400);
  const error = await readError(res);
  expect(error).toMatchObject({ code, type: "invalid_request_error", param });
  return error;
}

describe("a NUL character in any string input", () => {
  it("is a 400 on the public market routes' queries", async () => {
    await expect400(
      await bookRoute(jsonRequest("GET", `/v1/market/book?model=llama${encodeURIComponent(NUL)}`)),
      "invalid_request",
      "model",
    );
    await expect400(
      await tradesRoute(jsonRequest("GET", `/v1/market/trades?model=${encodeURIComponent(NUL)}x`)),
      "invalid_request",
      "model",
    );
  });

  it("is a 400 in the chat completion's model and in a message", async () => {
    const buyer = await seedBuyer(0n);
    await expect400(
      await callCompletions(buyer.key, { model: `m${NUL}`, messages: [{ role: "user", content: "hi" }] }),
      "invalid_request",
      "model",
    );
    const error = await expect400(
      await callCompletions(buyer.key, { model: "llama-3.3-70b", messages: [{ role: "user", content: `a${NUL}b` }] }),
      "invalid_request",
      "messages.0.content",
    );
    expect(error.message).toMatch(/NUL/);
  });

  it("is a 400 in an API key's name and an offer's models, and nothing is stored", async () => {
    const account = await seedSignedInAccount();
    await expect400(
      await createKeyRoute(jsonRequest("POST", "/v1/account/api-keys", { name: `ci${NUL}` }, { cookie: account.cookie })),
      "invalid_request",
      "name",
    );
    expect(await db.apiKey.count({ where: { accountId: account.id } })).toBe(0);

    const offer = {
      upstream_base_url: "http://127.0.0.1:9/v1",
      upstream_api_key: "k",
      models: [`llama${NUL}`],
      price_cents: 50,
      daily_capacity: "1",
    };
    await expect400(
      await postOfferRoute(jsonRequest("POST", "/v1/supply/offers", offer, { cookie: account.cookie })),
      "invalid_request",
      "models.0",
    );
    expect(await db.offer.count({ where: { supplierId: account.id } })).toBe(0);
  });

  it("is a 400 in an object key too", async () => {
    const account = await seedSignedInAccount();
    const res = await createKeyRoute(jsonRequest("POST", "/v1/account/api-keys", { [`na${NUL}me`]: "x" }, { cookie: account.cookie }));
    expect(res.status).toBe(400);
    expect((await readError(res)).code).toBe("invalid_request");
  });
});

describe("an unpaired UTF-16 surrogate in any string input", () => {
  // JSON can spell one ("\\ud800"), UTF-8 cannot: the database (the embedded one refused it with a 500) and the
  // upstreams would each get something else. A pair (an emoji) is text like any other.
  it("is a 400 in an API key's name or a chat message, nothing stored or charged; a surrogate pair is fine", async () => {
    const account = await seedSignedInAccount();
    for (const name of ["\ud800", "a\udc00b", "x\ud83d"]) {
      const res = await createKeyRoute(jsonRequest("POST", "/v1/account/api-keys", { name }, { cookie: account.cookie }));
      await expect400(res, "invalid_request", "name");
    }
    expect(await db.apiKey.count({ where: { accountId: account.id } })).toBe(0);
    const ok = await createKeyRoute(jsonRequest("POST", "/v1/account/api-keys", { name: "💥 key" }, { cookie: account.cookie }));
    expect(ok.status).toBe(201);

    const buyer = await seedBuyer(10_000_000n);
    const refused = await callCompletions(buyer.key, { model: "llama-3.3-70b", messages: [{ role: "user", content: "half a \ud83d" }] });
    expect(refused.status).toBe(400);
    expect((await readError(refused)).message).toMatch(/surrogate/);
    expect(await buyerBalance(buyer.id)).toEqual({ balance: 10_000_000n, held: 0n });
  });
});

describe("an amount beyond what the ledger can hold", () => {
  it("is a 400 for an API key's spend_limit above the 64-bit column, and no key is created", async () => {
    const account = await seedSignedInAccount();
    const res = await createKeyRoute(
      jsonRequest("POST", "/v1/account/api-keys", { spend_limit: "999999999999999.999999" }, { cookie: account.cookie }),
    );
    await expect400(res, "amount_out_of_range", "spend_limit");
    expect(await db.apiKey.count({ where: { accountId: account.id } })).toBe(0);
  });

  it("still accepts the largest amount that fits", async () => {
    const account = await seedSignedInAccount();
    const res = await createKeyRoute(
      jsonRequest("POST", "/v1/account/api-keys", { spend_limit: "9223372036854.775807" }, { cookie: account.cookie }),
    );
    expect(res.status).toBe(201);
    expect(((await res.json()) as { spend_limit: string }).spend_limit).toBe("9223372036854.775807");
  });
});
