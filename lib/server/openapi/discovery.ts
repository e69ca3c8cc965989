/**
 * The operations of the discovery endpoints: each group-version's resource list
 * (`GET /api/v1/`, `GET /apis/<group>/<version>/`) and the small documents `api`, `apis`,
 * `apis/<group>` and `version`, one operation each.
 */

import {
  API_GROUP,
  API_GROUP_LIST,
  API_RESOURCE_LIST,
  API_VERSIONS,
  groupCamel,
  lowerFirst,
  tagOf,
  upperFirst,
  VERSION_INFO,
} from "./names.ts";
import { OBJECT_MEDIA, ok, type Operation, UNAUTHORIZED } from "./model.ts";

/** `GET /api/v1/`, `GET /apis/<group>/<version>/`: the group-version's resource list. */
export function resourceListOperation(group: string, version: string): Operation {
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return {
    path: `${prefix}/`,
    method: "get",
    operationId: `get${groupCamel(group)}${upperFirst(version)}APIResources`,
    description: "get available resources",
    tag: tagOf(group, version),
    params: [],
    responses: { "200": ok(API_RESOURCE_LIST), "401": UNAUTHORIZED },
  };
}

function discoveryOperation(
  path: string,
  operationId: string,
  tag: string,
  schema: string,
  description: string,
  media = OBJECT_MEDIA,
): Operation {
  return {
    path,
    method: "get",
    operationId,
    description,
    tag,
    params: [],
    responses: { "200": ok(schema, media), "401": UNAUTHORIZED },
  };
}

/** The operation of each discovery document, by document path, in the order served: `api`,
 * `apis`, `apis/<group>` for each of `groups`, `version`. */
export function discoveryOperations(groups: Iterable<string>): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  ops.set(
    "api",
    discoveryOperation(
      "/api/",
      "getCoreAPIVersions",
      "core",
      API_VERSIONS,
      "get available API versions",
    ),
  );
  ops.set(
    "apis",
    discoveryOperation(
      "/apis/",
      "getAPIVersions",
      "apis",
      API_GROUP_LIST,
      "get available API versions",
    ),
  );
  for (const group of groups) {
    ops.set(
      `apis/${group}`,
      discoveryOperation(
        `/apis/${group}/`,
        `get${groupCamel(group)}APIGroup`,
        lowerFirst(groupCamel(group)),
        API_GROUP,
        "get information of a group",
      ),
    );
  }
  ops.set(
    "version",
    discoveryOperation(
      "/version/",
      "getCodeVersion",
      "version",
      VERSION_INFO,
      "get the version information for this server",
      ["application/json"],
    ),
  );
  return ops;
}
