export { createAccount, getAccount, listAccounts, type Account } from "./accounts.js";
export {
  createClient,
  disableClient,
  generateClientSecret,
  listClients,
  rotateClientSecret,
  type ClientInfo,
  type CreatedClient,
} from "./clients.js";
export {
  createServiceToken,
  listServiceTokens,
  revokeServiceToken,
  type CreatedServiceToken,
  type ServiceTokenInfo,
} from "./service-tokens.js";
export { listSigningKeys, rotateSigningKey } from "./signing-keys.js";
export { ensureBootstrap, type BootstrapInput, type BootstrapResult } from "./bootstrap.js";
export { runAdminCli, type AdminCliIo } from "./cli.js";
export { Checks, checkAdminGrant } from "./validation.js";
