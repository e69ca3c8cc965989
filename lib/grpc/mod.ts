/**
 * A gRPC client transport of our own: HTTP/2 (RFC 9113) with HPACK (RFC 7541) over a Deno
 * socket the caller opens, unary calls and bidirectional streams of length-prefixed messages.
 * Messages are bytes; their encoding is the caller's.
 * @module
 */

export {
  type CallOptions,
  type ChannelOptions,
  type ClientStream,
  type Dial,
  GrpcChannel,
  GrpcError,
  Status,
  type StreamHandlers,
} from "./channel.ts";
export type { Transport } from "./h2_session.ts";
export { nodeTransport } from "./node_transport.ts";
