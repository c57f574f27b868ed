import { readFileSync } from "node:fs";
import { credentials, ServerCredentials, type ChannelCredentials } from "@grpc/grpc-js";

/**
 * gRPC transport security from the environment (PEM file paths; the chart mounts them from a
 * Secret, e.g. one cert-manager issues):
 * - GRPC_TLS_CERT + GRPC_TLS_KEY: servers speak TLS with this certificate, and clients present
 *   it (mutual TLS);
 * - GRPC_TLS_CA: clients verify servers against it, and servers with it require a client
 *   certificate it signed (mTLS);
 * - GRPC_TLS_SERVER_NAME: the name clients expect in the server's certificate, when it differs
 *   from the address dialled.
 * None set: plaintext, for loopback (the default bind) and local development.
 */
export interface GrpcTlsFiles {
  cert?: string | undefined;
  key?: string | undefined;
  ca?: string | undefined;
  serverName?: string | undefined;
}

export const grpcTlsFromEnv = (env: NodeJS.ProcessEnv = process.env): GrpcTlsFiles => ({
  cert: env.GRPC_TLS_CERT || undefined,
  key: env.GRPC_TLS_KEY || undefined,
  ca: env.GRPC_TLS_CA || undefined,
  serverName: env.GRPC_TLS_SERVER_NAME || undefined,
});

const read = (path: string | undefined) => (path ? readFileSync(path) : null);

export function grpcServerCredentials(tls: GrpcTlsFiles = grpcTlsFromEnv()): ServerCredentials {
  if (!tls.cert || !tls.key) return ServerCredentials.createInsecure();
  const ca = read(tls.ca);
  return ServerCredentials.createSsl(
    ca,
    [{ cert_chain: read(tls.cert)!, private_key: read(tls.key)! }],
    ca !== null,
  );
}

export function grpcClientCredentials(tls: GrpcTlsFiles = grpcTlsFromEnv()): ChannelCredentials {
  if (!tls.ca && !tls.cert) return credentials.createInsecure();
  return credentials.createSsl(read(tls.ca), read(tls.key), read(tls.cert));
}

/** Channel options TLS needs (the expected server name), or none. */
export const grpcTlsChannelOptions = (tls: GrpcTlsFiles = grpcTlsFromEnv()) =>
  tls.serverName ? { "grpc.ssl_target_name_override": tls.serverName } : {};
