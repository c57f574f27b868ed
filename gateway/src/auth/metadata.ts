import { scopes } from "./scopes.js";

/** RFC 8414 authorization server metadata for `/.well-known/oauth-authorization-server`. */
export interface AuthorizationServerMetadata {
  issuer: string;
  token_endpoint: string;
  jwks_uri: string;
  grant_types_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  scopes_supported: string[];
  response_types_supported: string[];
}

export function authorizationServerMetadata(issuer: string): AuthorizationServerMetadata {
  return {
    issuer,
    token_endpoint: `${issuer}/oauth/token`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    grant_types_supported: ["client_credentials"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    scopes_supported: [...scopes],
    // No authorization endpoint: the client credentials grant has no response types.
    response_types_supported: [],
  };
}
