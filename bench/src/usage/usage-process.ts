import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

/** A free loopback port (bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The usage service's mesh entrypoint (dist/main.js) as a child process. */
export async function startUsageProcess(options: {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  port: number;
}): Promise<{ port: number; stop(): Promise<void> }> {
  const { port } = options;
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.resolve("@switchboard/usage/main"))],
    {
      env: {
        ...process.env,
        NODE_ENV: "test",
        LOG_LEVEL: "warn",
        DATABASE_URL: options.databaseUrl,
        REDIS_URL: options.redisUrl,
        REDIS_QUEUE_PREFIX: options.prefix,
        USAGE_GRPC_PORT: String(port),
        USAGE_GRPC_HOST: "127.0.0.1",
        SIGNING_KEY_SECRET: "usage-bench-signing-key-secret-0123456789",
      },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    port,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
