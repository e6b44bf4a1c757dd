/**
 * Words for each value of a set (statuses, roles, reasons). Its keys are those of the Japanese
 * texts, and the compiler refuses English texts that miss one; a lookup by any other string gives
 * undefined, so a screen shows the value itself.
 */
export type Labels<K extends string> = Readonly<Record<K, string>> & Readonly<Partial<Record<string, string>>>;

export const labels = <K extends string>(words: Record<K, string>): Labels<K> => words;
