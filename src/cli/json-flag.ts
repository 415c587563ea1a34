/**
 * The --json option, apart from the schemas in json-output.ts: a command's
 * definition needs only this, and --help must not load zod (docs/performance.md).
 */
export const JSON_FLAG = ['--json', 'print one JSON document (its shape: docs/cli.md) instead of text'] as const;
