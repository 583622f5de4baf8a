/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Prisma's query compiler loads a WASM file from node_modules at run time; keep these out of the bundle.
  serverExternalPackages: ["@prisma/client", "@prisma/adapter-pg", "pg", "gpt-tokenizer"],
};

export default nextConfig;
