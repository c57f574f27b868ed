import { checkHealth, createHealthClient } from "@switchboard/kit";

/** Ready when grpc.health.v1 at `address` answers SERVING (the overall status, service ""). */
export function grpcReadiness(address: string): () => Promise<boolean> {
  return async () => {
    const client = createHealthClient(address);
    try {
      return (await checkHealth(client, "", 1_000)) === "SERVING";
    } finally {
      client.close();
    }
  };
}

/** Ready when the gateway's health endpoint answers 200 (pass, or warn while a backend is away). */
export function httpReadiness(url: string): () => Promise<boolean> {
  return async () => {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.status === 200;
  };
}
