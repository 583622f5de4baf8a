import {
  createWalletClient,
  fromHex,
  getAddress,
  http,
  numberToHex,
  SwitchChainError,
  UserRejectedRequestError,
  type Address,
  type Chain,
  type EIP1193RequestFn,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { createConnector } from "wagmi";
import { ANVIL_DEV_ACCOUNTS } from "@/lib/chain/constants";
import type { TestConnectorFactory } from "@/lib/browser/test-connector";
import {
  TEST_WALLET_ACCOUNT_KEY,
  TEST_WALLET_CHAIN_KEY,
  TEST_WALLET_CHANGED_EVENT,
  TEST_WALLET_CONNECTED_KEY,
  TEST_WALLET_REJECT_PAYMENT_KEY,
  TEST_WALLET_REJECT_SIGN_IN_KEY,
} from "@/lib/browser/test-wallet-storage";

/**
 * The e2e test wallet: a wagmi connector that signs in-process with a viem local account (one of anvil's
 * PUBLIC dev keys), so Playwright can sign in, top up and withdraw without a wallet extension. Compiled in
 * only when the build sets SVC_TEST_WALLET=1 (see next.config.mjs); production builds get the stub.
 *
 * Which account and which starting chain come from localStorage (lib/browser/test-wallet-storage.ts);
 * defaults: dev account 4 on Base.
 */
const DEFAULT_ACCOUNT_INDEX = 4;

function readNumber(key: string, fallback: number): number {
  if (typeof window === "undefined") return fallback;
  const value = Number(window.localStorage.getItem(key));
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

export const createTestConnector: TestConnectorFactory = ({ rpcUrl }) =>
  createConnector((config) => {
    const account = () => {
      const index = readNumber(TEST_WALLET_ACCOUNT_KEY, DEFAULT_ACCOUNT_INDEX);
      const local = privateKeyToAccount((ANVIL_DEV_ACCOUNTS[index] ?? ANVIL_DEV_ACCOUNTS[DEFAULT_ACCOUNT_INDEX]).privateKey);
      const reject = async (): Promise<never> => {
        throw new UserRejectedRequestError(new Error("User rejected the request."));
      };
      return {
        ...local,
        ...(window.localStorage.getItem(TEST_WALLET_REJECT_SIGN_IN_KEY) === "1" && { signMessage: reject }),
        ...(window.localStorage.getItem(TEST_WALLET_REJECT_PAYMENT_KEY) === "1" && { signTypedData: reject }),
      };
    };
    let chainId = readNumber(TEST_WALLET_CHAIN_KEY, base.id);
    let connected = false;

    const chainFor = (id: number): Chain =>
      config.chains.find((c) => c.id === id) ?? { ...base, id, name: `Chain ${id}`, rpcUrls: { default: { http: [rpcUrl] } } };

    const request = async ({ method, params }: { method: string; params?: unknown }): Promise<unknown> => {
      const p = (params ?? []) as unknown[];
      switch (method) {
        case "eth_chainId":
          return numberToHex(chainId);
        case "eth_accounts":
          return connected ? [account().address] : [];
        case "eth_requestAccounts":
          return [account().address];
        case "personal_sign":
          return account().signMessage({ message: { raw: p[0] as `0x${string}` } });
        case "eth_signTypedData_v4":
          return account().signTypedData(JSON.parse(p[1] as string));
        case "wallet_switchEthereumChain":
          chainId = fromHex((p[0] as { chainId: `0x${string}` }).chainId, "number");
          window.localStorage.setItem(TEST_WALLET_CHAIN_KEY, String(chainId));
          config.emitter.emit("change", { chainId });
          return null;
        default: {
          const res = await fetch(rpcUrl, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
          });
          const body = (await res.json()) as { result?: unknown; error?: { message: string } };
          if (body.error) throw new Error(body.error.message);
          return body.result;
        }
      }
    };
    const provider = { request: request as EIP1193RequestFn };

    // The user switched account (or network) in the wallet: announce it, as an extension's events do.
    if (typeof window !== "undefined") {
      window.addEventListener(TEST_WALLET_CHANGED_EVENT, (event) => {
        const next = (event as CustomEvent<{ chainId?: number } | null>).detail?.chainId;
        if (next) {
          chainId = next;
          window.localStorage.setItem(TEST_WALLET_CHAIN_KEY, String(chainId));
          config.emitter.emit("change", { chainId });
        }
        if (connected) config.emitter.emit("change", { accounts: [account().address] });
      });
    }

    return {
      id: "svcTestWallet",
      name: "Test wallet",
      type: "svcTestWallet",
      description: "Signs in-process with a public anvil dev key (test builds only)",
      async connect(parameters) {
        connected = true;
        window.localStorage.setItem(TEST_WALLET_CONNECTED_KEY, "1");
        if (parameters?.chainId && parameters.chainId !== chainId) await this.switchChain!({ chainId: parameters.chainId });
        const accounts = [account().address];
        return {
          accounts: (parameters?.withCapabilities ? accounts.map((address) => ({ address, capabilities: {} })) : accounts) as never,
          chainId,
        };
      },
      async disconnect() {
        connected = false;
        window.localStorage.removeItem(TEST_WALLET_CONNECTED_KEY);
      },
      async getAccounts() {
        return connected ? [account().address] : [];
      },
      async getChainId() {
        return chainId;
      },
      async getProvider() {
        return provider;
      },
      async getClient(parameters) {
        return createWalletClient({ account: account(), chain: chainFor(parameters?.chainId ?? chainId), transport: http(rpcUrl) });
      },
      async isAuthorized() {
        connected = window.localStorage.getItem(TEST_WALLET_CONNECTED_KEY) === "1";
        return connected;
      },
      async switchChain({ chainId: next }) {
        const chain = config.chains.find((c) => c.id === next);
        if (!chain) throw new SwitchChainError(new Error(`chain ${next} is not configured`));
        chainId = next;
        window.localStorage.setItem(TEST_WALLET_CHAIN_KEY, String(chainId));
        config.emitter.emit("change", { chainId });
        return chain;
      },
      onAccountsChanged(accounts) {
        if (accounts.length === 0) this.onDisconnect();
        else config.emitter.emit("change", { accounts: accounts.map((a) => getAddress(a) as Address) });
      },
      onChainChanged(chain) {
        config.emitter.emit("change", { chainId: Number(chain) });
      },
      async onDisconnect() {
        connected = false;
        config.emitter.emit("disconnect");
      },
    };
  });
