/** The child of tests/helpers/app-process.ts: the app's routes on a free loopback port; prints the URL, then serves. */
import { startRouteServer } from "./route-server";

const server = await startRouteServer();
process.stdout.write(`${server.url}\n`);
