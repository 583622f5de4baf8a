const NAMES: Record<number, string> = {
  1: "Ethereum",
  10: "OP Mainnet",
  56: "BNB Chain",
  137: "Polygon",
  42161: "Arbitrum One",
  84532: "Base Sepolia",
  11155111: "Sepolia",
};

export function chainName(chainId: number): string {
  return NAMES[chainId] ?? `chain ${chainId}`;
}
