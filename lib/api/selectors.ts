/**
 * Label and field selectors (label_selectors.ts, field_selectors.ts), in one import.
 *
 * @module
 */

export * from "./label_selectors.ts";
export * from "./field_selectors.ts";
