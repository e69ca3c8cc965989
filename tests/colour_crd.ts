// deno-lint-ignore-file no-explicit-any
/**
 * The two-version custom resource of the conversion tests: `things.conv.example.com`, v1
 * (storage) with `spec.color` and v1beta1 with `spec.colour`, converted by a webhook the test
 * starts with {@link convertColour} as its handler.
 */

/** A version's schema: an object whose `spec` has `props`. */
export const specSchema = (props: Record<string, unknown>) => ({
  openAPIV3Schema: {
    type: "object",
    properties: { spec: { type: "object", properties: props } },
  },
});

/** The CRD, its webhook at `hook.url`/convert; `extra` spec properties in both versions. */
export function thingsCrd(
  hook: { url: string; caBundle: string },
  extra: Record<string, unknown> = {},
): any {
  return {
    apiVersion: "apiextensions.platform.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "things.conv.example.com" },
    spec: {
      group: "conv.example.com",
      scope: "Namespaced",
      names: { plural: "things", singular: "thing", kind: "Thing" },
      versions: [
        {
          name: "v1beta1",
          served: true,
          storage: false,
          schema: specSchema({ colour: { type: "string" }, ...extra }),
        },
        {
          name: "v1",
          served: true,
          storage: true,
          schema: specSchema({ color: { type: "string" }, ...extra }),
        },
      ],
      conversion: {
        strategy: "Webhook",
        webhook: {
          conversionReviewVersions: ["v1"],
          clientConfig: { url: `${hook.url}/convert`, caBundle: hook.caBundle },
        },
      },
    },
  };
}

/** The conversion webhook's answer: renames `color` <-> `colour` as the desired version says. */
export function convertColour(review: any): Response {
  const { uid, desiredAPIVersion, objects } = review.request;
  const convertedObjects = objects.map((o: any) => {
    const spec = { ...o.spec };
    if (desiredAPIVersion.endsWith("/v1beta1") && "color" in spec) {
      spec.colour = spec.color;
      delete spec.color;
    } else if (desiredAPIVersion.endsWith("/v1") && "colour" in spec) {
      spec.color = spec.colour;
      delete spec.colour;
    }
    return { ...o, apiVersion: desiredAPIVersion, spec };
  });
  return Response.json({
    apiVersion: review.apiVersion,
    kind: "ConversionReview",
    response: { uid, convertedObjects, result: { status: "Success" } },
  });
}
