// The one function of @grpc/grpc-js the tracer uses (its typings pull in @types/node, whose
// globals clash with Deno's; see otlp_exporter_types.d.ts).

export const credentials: { createInsecure(): unknown };
