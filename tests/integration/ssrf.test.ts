import { describe, expect, it } from "vitest";
import { POST as postOfferRoute } from "@/app/v1/supply/offers/route";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { errorStatus } from "@/lib/http/errors";
import { createOffer } from "@/lib/supply/create-offer";
import { CreateOfferBody } from "@/lib/supply/schemas";
import {
  assertUpstreamUrlAllowed,
  classifyAddress,
  isAddressAllowed,
  isOwnAddress,
  ownAddresses,
  trustedUpstreams,
  upstreamTargetRefusal,
} from "@/lib/upstream/ssrf";
import { startCannedUpstream } from "../helpers/canned-upstream";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";

const PRODUCTION = { allowPrivate: false };
const DEV = { allowPrivate: true };

function rejection(url: string, policy = PRODUCTION): AppError {
  try {
    assertUpstreamUrlAllowed(url, policy);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error(`${url} was allowed`);
}

describe("SSRF: address classification", () => {
  it.each([
    "127.0.0.1",
    "127.255.255.254",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.1", // CGNAT
    "100.127.255.254",
    "169.254.10.10", // link-local
    "::1",
    "fc00::1",
    "fd12:3456::1", // unique local
    "fe80::1",
    "fe80::1%eth0",
    "::ffff:127.0.0.1", // IPv4-mapped loopback
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.1.1",
    "64:ff9b::a00:1", // NAT64 of 10.0.0.1
    "2002:c0a8:0101::1", // 6to4 of 192.168.1.1
  ])("%s is private: refused without the dev flag, allowed with it", (ip) => {
    expect(classifyAddress(ip)).toBe("private");
    expect(isAddressAllowed(ip, PRODUCTION)).toBe(false);
    expect(isAddressAllowed(ip, DEV)).toBe(true);
  });

  it.each([
    "0.0.0.0",
    "0.1.2.3",
    "::",
    "169.254.169.254", // cloud metadata
    "::ffff:169.254.169.254",
    "::ffff:a9fe:a9fe",
    "fd00:ec2::254",
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "ff02::1",
    "::127.0.0.1", // deprecated IPv4-compatible
    "not-an-ip",
  ])("%s is forbidden even with the dev flag", (ip) => {
    expect(classifyAddress(ip)).toBe("forbidden");
    expect(isAddressAllowed(ip, DEV)).toBe(false);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:0808:0808::1"])(
    "%s is public",
    (ip) => {
      expect(classifyAddress(ip)).toBe("public");
      expect(isAddressAllowed(ip, PRODUCTION)).toBe(true);
    },
  );
});

describe("SSRF: upstream URLs at posting time", () => {
  it("accepts public https URLs and normalizes the trailing slash", () => {
    expect(assertUpstreamUrlAllowed("https://api.venice.ai/api/v1/", PRODUCTION)).toBe("https://api.venice.ai/api/v1");
    expect(assertUpstreamUrlAllowed("https://8.8.8.8:8443/v1", PRODUCTION)).toBe("https://8.8.8.8:8443/v1");
  });

  it.each([
    ["http://api.venice.ai/api/v1", /https/],
    ["https://127.0.0.1/v1", /non-public/],
    ["https://localhost/v1", /not a public/],
    ["https://upstream.localhost/v1", /not a public/],
    ["https://metadata.google.internal/v1", /not a public/],
    ["https://intranet/v1", /not a public/],
    ["https://10.0.0.5/v1", /non-public/],
    ["https://[::1]/v1", /non-public/],
    ["https://[::ffff:127.0.0.1]/v1", /non-public/],
    ["https://[fd00::1]/v1", /non-public/],
    ["https://100.64.1.1/v1", /non-public/],
    ["https://0x7f000001/v1", /non-public/], // 127.0.0.1 spelled in hex
    ["https://2130706433/v1", /non-public/], // 127.0.0.1 as one number
    ["https://127.1/v1", /non-public/],
    ["https://169.254.169.254/latest", /non-public/],
    ["https://user:pass@api.venice.ai/v1", /credentials/],
    ["https://api.venice.ai/v1?key=abc", /query/],
    ["ftp://api.venice.ai/v1", /https/],
    ["file:///etc/passwd", /https/],
    ["not a url", /absolute URL/],
  ])("refuses %s with the dev flag off (400 upstream_url_forbidden)", (url, reason) => {
    const error = rejection(url);
    expect(error.code).toBe("upstream_url_forbidden");
    expect(errorStatus(error)).toBe(400);
    expect(error.message).toMatch(reason);
  });

  it("with the dev flag allows http and loopback/private hosts, but never metadata or non-http schemes", () => {
    expect(assertUpstreamUrlAllowed("http://127.0.0.1:8787/v1", DEV)).toBe("http://127.0.0.1:8787/v1");
    expect(assertUpstreamUrlAllowed("http://localhost:8787/v1/", DEV)).toBe("http://localhost:8787/v1");
    expect(assertUpstreamUrlAllowed("http://10.0.0.5/v1", DEV)).toBe("http://10.0.0.5/v1");
    expect(rejection("http://169.254.169.254/latest", DEV).code).toBe("upstream_url_forbidden");
    expect(rejection("http://0.0.0.0:8787/v1", DEV).code).toBe("upstream_url_forbidden");
    expect(rejection("ftp://127.0.0.1/v1", DEV).code).toBe("upstream_url_forbidden");
    expect(rejection("http://localhost:3000/v1", DEV).message).toMatch(/this marketplace/); // our own origin in tests
  });
});

describe("SSRF: an upstream that is svc itself", () => {
  // Tests run with SVC_ORIGIN http://localhost:3000 and the dev flag on, like `npm run dev`.
  it.each([
    "http://localhost.:3000/v1", // trailing dot: the same DNS name
    "http://LocalHost:3000/v1",
    "http://127.0.0.1:3000/v1", // what localhost resolves to
    "http://127.1:3000/v1",
    "http://[::1]:3000/v1",
    "http://[::ffff:127.0.0.1]:3000/v1",
  ])("POST /v1/supply/offers refuses %s before any request is made (400)", async (upstream_base_url) => {
    const supplier = await seedSignedInAccount();
    const body = { upstream_base_url, upstream_api_key: "k", models: ["llama-3.3-70b"], price_cents: 50, daily_capacity: "1" };
    const res = await postOfferRoute(jsonRequest("POST", "/v1/supply/offers", body, { cookie: supplier.cookie }));
    expect(res.status).toBe(400);
    const error = await readError(res);
    expect(error).toMatchObject({ code: "upstream_url_forbidden", param: "upstream_base_url" });
    expect(error.message).toMatch(/this marketplace itself/);
    expect(await db.offer.count({ where: { supplierId: supplier.id } })).toBe(0);
  });

  it("refuses a host name that resolves to our own address, checked on the connection", async () => {
    const supplier = await seedSignedInAccount();
    const resolver = async () => [{ address: "127.0.0.1", family: 4 }];
    const input = CreateOfferBody.parse({
      upstream_base_url: "http://mirror.invalid:3000/v1",
      upstream_api_key: "k",
      models: ["llama-3.3-70b"],
      price_cents: 50,
      daily_capacity: "1",
    });
    const error = await createOffer(supplier.id, input, { policy: DEV, resolver }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "upstream_url_forbidden", message: expect.stringMatching(/this marketplace itself/) });
  });

  it("counts a public address of ours on every port, a private one on the ports svc serves", () => {
    const own = ownAddresses(["93.184.216.34", "10.0.0.9"], [443]);
    expect(isOwnAddress("93.184.216.34", 8443, own)).toBe(true);
    expect(isOwnAddress("::ffff:93.184.216.34", 443, own)).toBe(true);
    expect(isOwnAddress("10.0.0.9", 443, own)).toBe(true);
    expect(isOwnAddress("10.0.0.9", 8787, own)).toBe(false);
    expect(isOwnAddress("93.184.216.35", 443, own)).toBe(false);
  });
});

describe("SSRF: private upstreams the operator trusts (PRIVATE_UPSTREAM_ALLOW)", () => {
  // Production: no dev flag, a supplier's vLLM on the operator's network listed by range and by name.
  const TRUSTED = { allowPrivate: false, trusted: trustedUpstreams(["10.0.0.0/8", "fd00:1::/32", "vllm.internal", "*.gpu.internal"]) };

  it("allows listed ranges and names, over http too, and nothing else private", () => {
    expect(assertUpstreamUrlAllowed("http://10.1.2.3:8000/v1", TRUSTED)).toBe("http://10.1.2.3:8000/v1");
    expect(assertUpstreamUrlAllowed("https://[fd00:1::5]/v1", TRUSTED)).toBe("https://[fd00:1::5]/v1");
    expect(assertUpstreamUrlAllowed("http://vllm.internal:8000/v1", TRUSTED)).toBe("http://vllm.internal:8000/v1");
    expect(assertUpstreamUrlAllowed("http://a100-7.gpu.internal/v1", TRUSTED)).toBe("http://a100-7.gpu.internal/v1");
    expect(rejection("https://192.168.1.5/v1", TRUSTED).message).toMatch(/non-public/); // not listed
    expect(rejection("https://other.internal/v1", TRUSTED).message).toMatch(/not a public/);
    expect(rejection("https://gpu.internal/v1", TRUSTED).message).toMatch(/not a public/); // *. means subdomains
    expect(rejection("http://api.venice.ai/v1", TRUSTED).message).toMatch(/https.*PRIVATE_UPSTREAM_ALLOW/); // http: listed hosts only
    // Metadata and the like stay forbidden even inside a listed range.
    const wide = { allowPrivate: false, trusted: trustedUpstreams(["169.254.0.0/16"]) };
    expect(rejection("http://169.254.169.254/latest", wide).code).toBe("upstream_url_forbidden");
    expect(isAddressAllowed("169.254.10.1", wide)).toBe(true);
  });

  it("checks every connection: a listed name may resolve to a private address, an unlisted one only into a listed range", async () => {
    expect(await upstreamTargetRefusal("10.9.9.9", 8000, TRUSTED, "vllm.internal")).toBeNull();
    expect(await upstreamTargetRefusal("192.168.3.3", 8000, TRUSTED, "vllm.internal")).toBeNull(); // the name is trusted
    expect(await upstreamTargetRefusal("10.9.9.9", 443, TRUSTED, "gpu.example.com")).toBeNull(); // the range is trusted
    expect(await upstreamTargetRefusal("::ffff:10.9.9.9", 443, TRUSTED, "gpu.example.com")).toBeNull();
    expect(await upstreamTargetRefusal("192.168.3.3", 443, TRUSTED, "gpu.example.com")).toMatch(/non-public/);
    expect(await upstreamTargetRefusal("169.254.169.254", 80, TRUSTED, "vllm.internal")).toMatch(/non-public/);
  });

  it("posts an offer on a real private upstream only when the operator lists it", async () => {
    const upstream = await startCannedUpstream([{ id: "llama-3.3-70b" }]);
    try {
      const supplier = await seedSignedInAccount();
      const body = {
        upstream_base_url: upstream.url,
        upstream_api_key: upstream.apiKey,
        models: ["llama-3.3-70b"],
        price_cents: 50,
        daily_capacity: "1",
      };
      const input = CreateOfferBody.parse(body);
      const port = new URL(upstream.url).port;
      const refused = await createOffer(supplier.id, input, { policy: PRODUCTION }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: "upstream_url_forbidden" });
      expect(await db.offer.count({ where: { supplierId: supplier.id } })).toBe(0);

      const listed = { allowPrivate: false, trusted: trustedUpstreams([`127.0.0.1`]) };
      const offer = await createOffer(supplier.id, input, { policy: listed });
      expect(offer.upstream_base_url).toBe(`http://127.0.0.1:${port}/v1`);
      // By name: the host name is listed, the connection goes to the loopback address it resolves to.
      const byName = { allowPrivate: false, trusted: trustedUpstreams(["vllm.internal"]) };
      const resolver = async () => [{ address: "127.0.0.1", family: 4 }];
      const named = CreateOfferBody.parse({ ...body, upstream_base_url: `http://vllm.internal:${port}/v1` });
      await expect(createOffer(supplier.id, named, { policy: byName, resolver })).resolves.toMatchObject({
        upstream_base_url: `http://vllm.internal:${port}/v1`,
      });
      // The same name unlisted: refused before any connection.
      await expect(createOffer(supplier.id, named, { policy: PRODUCTION, resolver })).rejects.toMatchObject({
        code: "upstream_url_forbidden",
      });
    } finally {
      await upstream.stop();
    }
  });
});
