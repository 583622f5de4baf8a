/**
 * Security headers of production answers, set by the front door on every response (pages, API and assets).
 * The CSP is what the dashboard needs and no more: Next's inline bootstrap scripts and styles ('unsafe-inline';
 * nonces would make every page dynamic), the RPC browsers read the chain through, and Coinbase Wallet's own
 * endpoints (keys.coinbase.com opens as a popup, hence COOP same-origin-allow-popups rather than same-origin).
 * Nobody may frame the app. HSTS only over https (a browser ignores it on http, and local dev is http).
 */
import "server-only";

export type SecurityHeaderSettings = { production: boolean; secure: boolean; publicRpcUrl: string };

const COINBASE_WALLET = ["https://*.coinbase.com", "https://www.walletlink.org", "wss://www.walletlink.org"];

export function securityHeaders(settings: SecurityHeaderSettings): Record<string, string> {
  if (!settings.production) return {};
  const rpcOrigin = new URL(settings.publicRpcUrl).origin;
  const csp = [
    "default-src 'self'",
    "script-src 'self' 'unsafe-inline'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob: https:",
    "font-src 'self' data:",
    `connect-src 'self' ${rpcOrigin} ${COINBASE_WALLET.join(" ")}`,
    `frame-src ${COINBASE_WALLET.filter((s) => s.startsWith("https:")).join(" ")}`,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(settings.secure ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
  return {
    "content-security-policy": csp,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
    "cross-origin-opener-policy": "same-origin-allow-popups",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
    ...(settings.secure ? { "strict-transport-security": "max-age=31536000" } : {}),
  };
}
