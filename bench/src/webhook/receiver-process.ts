import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The benchmark's receiver, in its own process: answers every POST 200 after reading the body
 * (keep-alive), and reports how many it got when asked.
 */
let received = 0;
const server = createServer((req, res) => {
  req.on("data", () => undefined);
  req.on("end", () => {
    received += 1;
    res.writeHead(200, { "content-type": "application/json", "content-length": "2" });
    res.end("{}");
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, "127.0.0.1", () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on("message", (message: { type?: string }) => {
  if (message?.type === "count") process.send?.({ received });
  if (message?.type === "stop") server.close(() => process.exit(0));
});
