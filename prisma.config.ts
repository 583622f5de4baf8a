import { defineConfig } from "prisma/config";
import { createMigrationAdapter } from "./prisma/adapter-pg-workarounds";

// Tool configuration, like next.config.mjs: the Prisma CLI loads it outside the app, so it reads its one variable
// itself (lib/env.ts is server-only).
// eslint-disable-next-line no-restricted-properties -- CLI configuration
const databaseUrl = process.env.DATABASE_URL;

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  adapter: async () => {
    if (!databaseUrl) throw new Error("DATABASE_URL is not set. Run `npm run dev` (it starts an embedded database) or set DATABASE_URL.");
    return createMigrationAdapter(databaseUrl);
  },
});
