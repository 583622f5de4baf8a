import { defineConfig } from "prisma/config";
import { requireDatabaseUrl } from "./lib/env";
import { createMigrationAdapter } from "./prisma/adapter-pg-workarounds";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  adapter: async () => createMigrationAdapter(requireDatabaseUrl()),
});
