// The few declarations of @grpc/grpc-js and @grpc/proto-loader the etcd client uses. Their own
// typings pull in @types/node, whose globals (crypto's CryptoKey, for one) clash with Deno's.

export interface ServiceError extends Error {
  code: number;
  details: string;
}

export declare class Metadata {
  set(key: string, value: string): void;
}

export interface ChannelCredentials {
  readonly _brand: "ChannelCredentials";
}

export const credentials: {
  createInsecure(): ChannelCredentials;
  createSsl(
    rootCerts?: Uint8Array | null,
    privateKey?: Uint8Array | null,
    certChain?: Uint8Array | null,
    verifyOptions?: {
      /** Checks the server's certificate (node:tls's signature); an Error when it fails. */
      checkServerIdentity?: (host: string, cert: unknown) => Error | undefined;
    },
  ): ChannelCredentials;
};

export type ServiceClientConstructor = new (
  address: string,
  credentials: ChannelCredentials,
  options?: Record<string, unknown>,
) => unknown;

export function loadPackageDefinition(def: unknown): unknown;
