/** SQL text shared by both databases. */

/** A list of phases as an SQL literal list, for queries built once (the phases are paybatch's own constants, never input). */
export const phaseList = (phases: readonly string[]): string => `(${phases.map((p) => `'${p}'`).join(', ')})`;
