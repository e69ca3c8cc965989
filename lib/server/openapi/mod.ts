/**
 * OpenAPI documents, derived from the resource definitions and their schemas: `/openapi/v3`
 * (an index and one OpenAPI 3.0 document per group-version and discovery document) and
 * `/openapi/v2` (one Swagger 2.0 document, in JSON or gnostic's protobuf).
 *
 * Routes, operation ids and `x-kubernetes-*` markers have the shapes Kubernetes generates, so
 * kubectl (`explain`, `apply`, client-side validation) and generated clients work unchanged.
 * This is what the rest of the server imports from the folder.
 */

export {
  CatalogueOpenAPI,
  type OpenAPIDocument,
  type OpenAPIIndex,
  OpenAPIService,
} from "./service.ts";
export { openAPIv2Handler } from "./v2_handler.ts";
