/**
 * The options of `platform patch` (spec 03, "Command-line patch client") and its help text.
 *
 * @module
 */

import { flagHelp, type FlagSpec } from "./flags.ts";
import { GLOBAL_FLAGS } from "./options.ts";

/** The patch command's own options, in `--help` order. */
export const PATCH_FLAGS: FlagSpec[] = [
  {
    name: "type",
    kind: "string",
    default: "strategic",
    help: "The type of patch being provided; one of [json merge strategic]. Strategic merge " +
      "patch is not supported for custom resources.",
  },
  {
    name: "patch",
    short: "p",
    kind: "string",
    help: "The patch to be applied to the resource JSON file (JSON or YAML).",
  },
  {
    name: "patch-file",
    kind: "string",
    help: "A file containing a patch to be applied to the resource.",
  },
  {
    name: "filename",
    short: "f",
    kind: "strings",
    default: "[]",
    help: "Filename, directory, or URL to files identifying the resource to update.",
  },
  {
    name: "kustomize",
    short: "k",
    kind: "string",
    help: "Process the kustomization directory (runs an installed `kustomize build`). This " +
      "flag can't be used together with -f or -R.",
  },
  {
    name: "recursive",
    short: "R",
    kind: "bool",
    help: "Process the directory used in -f, --filename recursively.",
  },
  {
    name: "subresource",
    kind: "string",
    help: "If specified, patch will operate on the subresource of the requested object. Must " +
      "be one of [status scale].",
  },
  {
    name: "dry-run",
    kind: "string",
    default: "none",
    bareValue: "client",
    help: 'Must be "none", "server", or "client". If client strategy, only print the object ' +
      "that would be sent, without sending it. If server strategy, submit server-side request " +
      "without persisting the resource.",
  },
  {
    name: "field-manager",
    kind: "string",
    default: "client-patch",
    help: "Name of the manager used to track field ownership.",
  },
  {
    name: "local",
    kind: "bool",
    help: "If true, patch will operate on the content of the file, not the server-side resource.",
  },
  {
    name: "output",
    short: "o",
    kind: "string",
    help: "Output format. One of: (json, yaml, name, go-template, go-template-file, template, " +
      "templatefile, jsonpath, jsonpath-as-json, jsonpath-file).",
  },
  {
    name: "template",
    kind: "string",
    help: "Template string or path to template file to use when -o=go-template, " +
      "-o=go-template-file.",
  },
  {
    name: "allow-missing-template-keys",
    kind: "bool",
    default: "true",
    help: "If true, ignore any errors in templates when a field or map key is missing in the " +
      "template. Only applies to golang and jsonpath output formats.",
  },
  {
    name: "show-managed-fields",
    kind: "bool",
    help: "If true, keep the managedFields when printing objects in JSON or YAML format.",
  },
];

/** Every option `platform patch` accepts. */
export const ALL_PATCH_FLAGS: FlagSpec[] = [...PATCH_FLAGS, ...GLOBAL_FLAGS];

/** `platform patch --help`. */
export function patchHelp(): string {
  return `Update fields of a resource using strategic merge patch, a JSON merge patch, or a JSON patch.

 JSON and YAML formats are accepted. Strategic merge patch is not supported for custom resources.

Examples:
  # Partially update a node using a strategic merge patch, specifying the patch as JSON
  platform patch configmap app -p '{"data":{"mode":"fast"}}'

  # Update a label with a JSON merge patch, the patch as YAML
  platform patch namespace team-a --type merge -p 'metadata: {labels: {tier: gold}}'

  # Remove a key with a JSON patch
  platform patch cm/app --type json -p '[{"op":"remove","path":"/data/mode"}]'

  # Patch the object a file names, or the file's content only (no server)
  platform patch -f app.yaml -p '{"data":{"mode":"slow"}}'
  platform patch -f app.yaml --local -o yaml -p '{"data":{"mode":"slow"}}'

Options:
${flagHelp(PATCH_FLAGS)}
Global connection options:
${flagHelp(GLOBAL_FLAGS)}
Usage:
  platform patch (-f FILENAME | TYPE NAME) [-p PATCH | --patch-file FILE] [options]
`;
}
