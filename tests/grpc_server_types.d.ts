// The few declarations of @grpc/grpc-js and @grpc/proto-loader the test OTLP receiver uses.
// Their own typings pull in @types/node, whose globals clash with Deno's.

export interface ServerCredentials {
  readonly _brand: "ServerCredentials";
}

export const ServerCredentials: { createInsecure(): ServerCredentials };

export interface ServerUnaryCall<T> {
  request: T;
  metadata: { get(key: string): unknown[] };
}

export declare class Server {
  constructor(options?: Record<string, unknown>);
  addService(service: unknown, implementation: Record<string, unknown>): void;
  bindAsync(
    port: string,
    creds: ServerCredentials,
    callback: (error: Error | null, port: number) => void,
  ): void;
  tryShutdown(callback: (error?: Error) => void): void;
  forceShutdown(): void;
}

export function loadPackageDefinition(def: unknown): unknown;
