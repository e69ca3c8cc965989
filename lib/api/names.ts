/**
 * Kubernetes' rules for names and keys: DNS-1123 labels and subdomains (object and namespace
 * names), qualified names (label, annotation and finalizer keys), label values and path
 * segments. Each check returns a list of messages worded as kube words them, empty when the
 * value is valid; callers wrap them into {@link FieldError}s at the field they checked.
 *
 * Lengths are counted in UTF-8 bytes, as kube (Go) counts them.
 *
 * @module
 */

/** Longest DNS-1123 label: namespace names and names of label-named kinds. */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** Longest DNS-1123 subdomain: the default for object names. */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** Longest name part of a qualified name (after the optional `prefix/`). */
export const QUALIFIED_NAME_MAX_LENGTH = 63;
/** Longest label value. */
export const LABEL_VALUE_MAX_LENGTH = 63;

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric " +
  "characters or '-', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG = "a DNS-1035 label must consist of lower case alphanumeric " +
  "characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case " +
  "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must " +
  "start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_MSG = "a valid label must be an empty string or consist of alphanumeric " +
  "characters, '-', '_' or '.', and must start and end with an alphanumeric character";

const dns1123LabelRe = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const dns1035LabelRe = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const dns1123SubdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const qualifiedNameRe = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const labelValueRe = new RegExp(`^${LABEL_VALUE_FMT}$`);

const encoder = new TextEncoder();

/** Length in UTF-8 bytes (what Go's `len` counts). */
export function byteLength(s: string): number {
  // deno-lint-ignore no-control-regex
  return /^[\x00-\x7f]*$/.test(s) ? s.length : encoder.encode(s).length;
}

/** kube's `RegexError`: the rule, examples, then the regex. */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const eg = examples.map((e, i) => `${i > 0 ? " or " : ""}'${e}', `).join("");
  return `${msg} (e.g. ${eg}regex used for validation is '${fmt}')`;
}

/** kube's `MaxLenError`. */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** kube's `EmptyError`. */
export const EMPTY_ERROR = "must be non-empty";

/**
 * Checks a lowercase RFC 1123 subdomain (at most 253 bytes): the default rule for object names.
 *
 * @example
 * ```ts
 * isDNS1123Subdomain("example.com"); // []
 * isDNS1123Subdomain("Example"); // ["a lowercase RFC 1123 subdomain must consist of …"]
 * ```
 */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) {
    errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  }
  if (!dns1123SubdomainRe.test(value)) {
    errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"));
  }
  return errs;
}

/**
 * Checks a lowercase RFC 1123 label (at most 63 bytes, no dots): namespace names.
 *
 * @example
 * ```ts
 * isDNS1123Label("my-ns"); // []
 * isDNS1123Label("a.b"); // ["must not contain dots"]
 * ```
 */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) {
    errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  }
  if (!dns1123LabelRe.test(value)) {
    if (dns1123SubdomainRe.test(value)) {
      // A valid subdomain but not a label: the length was checked above, so it is the dots.
      errs.push("must not contain dots");
    } else {
      errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"));
    }
  }
  return errs;
}

/** Checks a DNS-1035 label (at most 63 bytes, starting with a letter): Service names. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) {
    errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  }
  if (!dns1035LabelRe.test(value)) {
    errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"));
  }
  return errs;
}

/**
 * Checks a qualified name: an optional DNS subdomain prefix and `/`, then a name of at most 63
 * bytes of alphanumerics, `-`, `_` and `.` that starts and ends with an alphanumeric. Used for
 * label keys, annotation keys (lower-cased first) and finalizer names.
 *
 * @example
 * ```ts
 * isQualifiedName("app.kubernetes.io/name"); // []
 * isQualifiedName("bad key")[0]; // "name part must consist of alphanumeric characters, …"
 * ```
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) {
      errs.push(`prefix part ${EMPTY_ERROR}`);
    } else {
      for (const msg of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${msg}`);
    }
  } else {
    return [
      `a qualified name ${
        regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
      } with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) {
    errs.push(`name part ${EMPTY_ERROR}`);
  } else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) {
    errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  }
  if (!qualifiedNameRe.test(name)) {
    errs.push(
      `name part ${
        regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
      }`,
    );
  }
  return errs;
}

/**
 * Checks a label value: empty, or at most 63 bytes of alphanumerics, `-`, `_` and `.` that
 * starts and ends with an alphanumeric.
 */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRe.test(value)) {
    errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"));
  }
  return errs;
}

/** Names that would break a URL path. */
const NAME_MAY_NOT_BE = [".", ".."];
const NAME_MAY_NOT_CONTAIN = ["/", "%"];
/** C0 and C1 control characters and DEL: they break log lines and file names (NUL). */
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Checks that a name can be one segment of a URL path: not `.` or `..`, no `/` or `%`, and,
 * beyond kube's rule, no control character or unpaired surrogate (neither can be stored). With
 * `prefix` (a generateName) only the characters are checked, since more follow.
 */
export function validatePathSegmentName(
  name: string,
  options: { prefix?: boolean } = {},
): string[] {
  if (!options.prefix) {
    for (const bad of NAME_MAY_NOT_BE) {
      if (name === bad) return [`may not be '${bad}'`];
    }
  }
  const errs: string[] = [];
  for (const bad of NAME_MAY_NOT_CONTAIN) {
    if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  }
  if (CONTROL.test(name)) errs.push("may not contain control characters");
  if (!name.isWellFormed()) errs.push("may not contain unpaired surrogates");
  return errs;
}

/**
 * How a kind's `metadata.name` is validated. With `prefix` the value is a `generateName`, to
 * which random characters will be appended, so a trailing `-` is fine.
 */
export type ValidateNameFunc = (name: string, options?: { prefix?: boolean }) => string[];

/**
 * A generateName may end in `-`. As kube does, the last two characters are replaced by one
 * letter before checking (so the character before the dash goes unchecked here; the generated
 * name is checked in full later).
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith("-") ? `${name.slice(0, -2)}a` : name;
}

/** Names are DNS-1123 subdomains (the default for most kinds). */
export const nameIsDNSSubdomain: ValidateNameFunc = (name, options = {}) =>
  isDNS1123Subdomain(options.prefix ? maskTrailingDash(name) : name);

/** Names are DNS-1123 labels (namespaces and kinds whose names end up in DNS labels). */
export const nameIsDNSLabel: ValidateNameFunc = (name, options = {}) =>
  isDNS1123Label(options.prefix ? maskTrailingDash(name) : name);

/** Names are DNS-1035 labels (Services: their names become DNS labels and env var prefixes). */
export const nameIsDNS1035Label: ValidateNameFunc = (name, options = {}) =>
  isDNS1035Label(options.prefix ? maskTrailingDash(name) : name);

/** Names need only be usable as a URL path segment (e.g. RBAC roles). */
export const nameIsPathSegment: ValidateNameFunc = (name, options = {}) =>
  validatePathSegmentName(name, options);

/** The name rules a resource definition can name (`ResourceDefinition.nameValidation`). */
export type NameValidation = "dns1123Subdomain" | "dns1123Label" | "dns1035Label" | "pathSegment";

const NAME_VALIDATIONS: Record<NameValidation, ValidateNameFunc> = {
  dns1123Subdomain: nameIsDNSSubdomain,
  dns1123Label: nameIsDNSLabel,
  dns1035Label: nameIsDNS1035Label,
  pathSegment: nameIsPathSegment,
};

/**
 * The check for a named rule, or the function itself when given one.
 *
 * @example
 * ```ts
 * nameValidationFunc("dns1123Label")("a.b"); // ["must not contain dots"]
 * ```
 */
export function nameValidationFunc(rule: NameValidation | ValidateNameFunc): ValidateNameFunc {
  if (typeof rule === "function") return rule;
  const fn = Object.hasOwn(NAME_VALIDATIONS, rule) ? NAME_VALIDATIONS[rule] : undefined;
  if (!fn) throw new TypeError(`Unknown name validation "${rule}"`);
  return fn;
}

/** Characters of a generated suffix: kube's alphabet, without vowels and look-alikes. */
export const GENERATED_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
/** Length of the random suffix of a generated name. */
export const GENERATED_NAME_RANDOM_LENGTH = 5;
/** A longer generateName prefix is cut to this, so that the result fits in 63 characters. */
export const MAX_GENERATED_NAME_PREFIX_LENGTH = 63 - GENERATED_NAME_RANDOM_LENGTH;

/**
 * A name for `metadata.generateName`: the prefix (cut to 58 characters) and 5 random
 * characters. The result is not validated: the caller validates it as the object's name.
 *
 * @example
 * ```ts
 * generateName("web-"); // e.g. "web-x7k2q"
 * ```
 */
export function generateName(prefix: string): string {
  const base = prefix.length > MAX_GENERATED_NAME_PREFIX_LENGTH
    ? prefix.slice(0, MAX_GENERATED_NAME_PREFIX_LENGTH)
    : prefix;
  const n = GENERATED_NAME_ALPHABET.length;
  // Reject bytes beyond the largest multiple of n so that every character is equally likely.
  const limit = 256 - (256 % n);
  let suffix = "";
  while (suffix.length < GENERATED_NAME_RANDOM_LENGTH) {
    const b = randomByte();
    if (b < limit) suffix += GENERATED_NAME_ALPHABET[b % n];
  }
  return base + suffix;
}

/** Random bytes drawn from a pool refilled 4 KiB at a time (one system call per ~800 names). */
const randomPool = new Uint8Array(4096);
let randomUsed = randomPool.length;

function randomByte(): number {
  if (randomUsed === randomPool.length) {
    crypto.getRandomValues(randomPool);
    randomUsed = 0;
  }
  return randomPool[randomUsed++];
}
