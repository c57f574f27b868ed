export {
  KeyDecryptionError,
  openPrivateKey,
  sealPrivateKey,
  type KeyBinding,
} from "./key-encryption.js";
export {
  createKeyIfNone,
  isSigningAlgorithm,
  rotateKey,
  selectActiveKey,
  selectSigningKeys,
  signingAlgorithms,
  type CreatedKey,
  type SealedSigningKey,
  type SigningAlgorithm,
  type SigningKeyInfo,
  type SigningKeyRecord,
  type SigningKeySpec,
} from "./signing-key-records.js";
export {
  SigningKeyStore,
  type ActiveSigningKey,
  type PublicJwk,
  type SigningKeyStoreOptions,
} from "./signing-key-store.js";
export { createSigningKeysTable } from "./signing-keys-sql.js";
export { verifySignedRecord } from "./record-verification.js";
export { scryptAsync, type ScryptParams } from "./scrypt.js";
export { aesGcmOpen, aesGcmSeal } from "./aes-gcm.js";
