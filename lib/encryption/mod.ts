/**
 * Encryption at rest: the `EncryptionConfiguration` file and the value transformer the file
 * store uses to encrypt the values of the resources it names.
 *
 * @example
 * ```ts
 * const config = await loadEncryptionConfig("encryption.yaml");
 * const store = await FileStore.open({ dir: "data/store", transformer: new EncryptionTransformer(config) });
 * ```
 * @module
 */

export {
  ENCRYPTION_CONFIG_API_VERSIONS,
  ENCRYPTION_CONFIG_KIND,
  type EncryptionConfig,
  type EncryptionRule,
  loadEncryptionConfig,
  parseEncryptionConfig,
  type ProviderConfig,
} from "./config.ts";
export { EncryptionTransformer } from "./transformer.ts";
export { ENCRYPTED_PREFIX } from "./providers.ts";
