/**
 * Control (Unicode Cc) and format (Cf) characters: C0 and C1 controls, and the invisible ones that
 * change how text around them is shown or read, such as the bidirectional embeddings, overrides
 * and isolates (U+202A–U+202E, U+2066–U+2069), the direction marks (U+200E, U+200F, U+061C), zero
 * width spaces and joiners, and U+FEFF.
 */
const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/gu;

/**
 * A name as it may be stored and shown: without control and format characters, so that a payer
 * name or a bank's counterparty cannot reorder what a screen, a log or an export shows around it
 * (a right-to-left override can make `ﾔﾏﾀﾞ` read as something else) or hide characters from a
 * comparison. Everything else is kept as it is; applied where names enter the system.
 */
export function withoutControlCharacters(name: string): string {
  return name.replace(CONTROL_OR_FORMAT, '');
}
