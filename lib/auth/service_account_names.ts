/** How a service account appears as a user: its username and the groups it is in. */

const PREFIX = "system:serviceaccount:";

/** `system:serviceaccount:<namespace>:<name>` */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${PREFIX}${namespace}:${name}`;
}

/** The account a username names, or undefined for other users. */
export function parseServiceAccountUsername(
  username: string,
): { namespace: string; name: string } | undefined {
  if (!username.startsWith(PREFIX)) return undefined;
  const [namespace, name, ...rest] = username.slice(PREFIX.length).split(":");
  if (!namespace || !name || rest.length > 0) return undefined;
  return { namespace, name };
}

/** The groups every service account of `namespace` is in. */
export function serviceAccountGroups(namespace: string): string[] {
  return ["system:serviceaccounts", `system:serviceaccounts:${namespace}`];
}
