/**
 * A person's name goes into the audit trail, the logs and the pages people
 * read. A control character in it (a newline, an escape sequence, a bidi
 * override) could make one entry read as two, or show another name than the
 * one kept: such a name is refused wherever a name enters (the command line's
 * --as, the console's sign-in, the approval policy). Pure.
 */

/** Control characters (C0, DEL, C1), line and paragraph separators, and every bidi control that reorders what is shown. */
const CONTROL = /[\p{Cc}\u2028\u2029\p{Bidi_Control}]/u;

/** Why `name` cannot be a person's name, or null when it can. */
export function personNameProblem(name: string): string | null {
  if (name.trim() === '') return 'a name cannot be empty';
  const found = CONTROL.exec(name);
  if (!found) return null;
  const code = (found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
  return `a name cannot contain control characters (U+${code} at character ${[...name.slice(0, found.index)].length + 1})`;
}
