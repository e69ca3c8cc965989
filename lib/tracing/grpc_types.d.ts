// The few declarations of @grpc/grpc-js the export worker uses. Its own typings pull in
// @types/node, whose globals (crypto's CryptoKey, for one) clash with Deno's; the etcd client
// declares grpc-js the same way.

export interface ServiceError extends Error {
  code: number;
  details: string;
}

export interface ChannelCredentials {
  readonly _brand: "ChannelCredentials";
}

export const credentials: { createInsecure(): ChannelCredentials };

export declare class Metadata {}

/** A unary method's definition: the path and how its messages turn into bytes and back. */
export interface MethodDefinition {
  path: string;
  requestStream: false;
  responseStream: false;
  requestSerialize(value: Uint8Array): Uint8Array;
  requestDeserialize(bytes: Uint8Array): Uint8Array;
  responseSerialize(value: Uint8Array): Uint8Array;
  responseDeserialize(bytes: Uint8Array): Uint8Array;
}

export interface GenericClient {
  close(): void;
  [method: string]: unknown;
}

export function makeGenericClientConstructor(
  methods: Record<string, MethodDefinition>,
  serviceName: string,
): new (
  address: string,
  credentials: ChannelCredentials,
  options?: Record<string, unknown>,
) => GenericClient;
