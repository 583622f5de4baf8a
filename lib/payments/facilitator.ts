import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { x402Facilitator } from "@x402/core/facilitator";
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/facilitator";
import { concat, encodeFunctionData, type Abi, type Address, type Hash, type Hex } from "viem";
import { publicClient, relayerAccount } from "@/lib/chain/client";
import { faults } from "@/lib/payments/faults";
import { RelayerSendError, sendRelayerTransaction, waitForReceipt } from "@/lib/payments/relayer";
import { X402_NETWORK, X402_V1_NETWORK } from "@/lib/payments/x402";

type FacilitatorSigner = ConstructorParameters<typeof ExactEvmScheme>[0];

/** What one settlement learns about its broadcast, beyond the facilitator's SettleResponse. */
export type SettlementObserver = {
  /** Called with the transaction hash before it is broadcast. */
  onSigned?: (hash: Hash) => Promise<void>;
  sendError?: RelayerSendError;
};

const observers = new AsyncLocalStorage<SettlementObserver>();

/**
 * The facilitator's signer is the relayer on the configured RPC (anvil in dev and tests, Base in production).
 * Sends go through the relayer queue; the current settlement's observer hears the hash before the broadcast.
 */
function createRelayerSigner(): FacilitatorSigner {
  return {
    getAddresses: () => [relayerAccount.address],
    readContract: (args) => publicClient.readContract(args as Parameters<typeof publicClient.readContract>[0]),
    verifyTypedData: (args) => publicClient.verifyTypedData(args as Parameters<typeof publicClient.verifyTypedData>[0]),
    getCode: ({ address }) => publicClient.getCode({ address }),
    writeContract: async ({ address, abi, functionName, args, dataSuffix }) => {
      const data = encodeFunctionData({ abi: abi as Abi, functionName, args });
      return sendObserved(address, dataSuffix ? concat([data, dataSuffix]) : data);
    },
    sendTransaction: ({ to, data }) => sendObserved(to, data),
    waitForTransactionReceipt: async ({ hash }) => {
      await faults.beforeReceipt?.(hash);
      return waitForReceipt(hash);
    },
  };
}

async function sendObserved(to: Address, data: Hex): Promise<Hash> {
  const observer = observers.getStore();
  try {
    return await sendRelayerTransaction({ to, data }, { onSigned: observer?.onSigned });
  } catch (error) {
    if (observer && error instanceof RelayerSendError) observer.sendError = error;
    throw error;
  }
}

let facilitator: x402Facilitator | undefined;

/** The in-process facilitator: x402's own EIP-3009 verification and settlement, v2 and v1, for Base only. */
export function getFacilitator(): x402Facilitator {
  if (!facilitator) {
    const signer = createRelayerSigner();
    facilitator = new x402Facilitator()
      .register(X402_NETWORK, new ExactEvmScheme(signer))
      .registerV1(X402_V1_NETWORK as PaymentRequirements["network"], new ExactEvmSchemeV1(signer));
  }
  return facilitator;
}

export function verifyPayment(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
  return getFacilitator().verify(payload, requirements);
}

export function settlePayment(
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  observer: SettlementObserver,
): Promise<SettleResponse> {
  return observers.run(observer, () => getFacilitator().settle(payload, requirements));
}
