/**
 * The comments written beside the configuration schema's keys in the source
 * (a JSDoc block above a key, or a line comment after it), by the key's path
 * in the configuration: the schema's code is the truth, its comments are its
 * descriptions. Read with the TypeScript compiler's parser, not run.
 */
import { readFileSync } from 'node:fs';
import ts from 'typescript';

interface SchemaKey {
  comment: string;
  /** Another schema constant this key's value is built from (`batchSchema.default(...)`). */
  refersTo?: string;
  /** Keys of an object schema written inline (`retry: z.strictObject({...})`). */
  inline?: Map<string, SchemaKey>;
}

/** The object literal given to the first z.object/z.strictObject call in `node`, looking through chained calls. */
function objectSchemaLiteral(node: ts.Node): ts.ObjectLiteralExpression | undefined {
  if (ts.isCallExpression(node)) {
    const callee = node.expression.getText();
    const [first] = node.arguments;
    if (/^z\.(strictObject|object)$/.test(callee) && first && ts.isObjectLiteralExpression(first)) return first;
    return objectSchemaLiteral(node.expression);
  }
  if (ts.isPropertyAccessExpression(node) || ts.isParenthesizedExpression(node)) return objectSchemaLiteral(node.expression);
  return undefined;
}

/** The identifier a chain of calls starts from (`batchSchema` of `batchSchema.default(...)`). */
function rootIdentifier(node: ts.Node): string | undefined {
  if (ts.isIdentifier(node)) return node.text;
  if (ts.isCallExpression(node) || ts.isPropertyAccessExpression(node) || ts.isParenthesizedExpression(node)) return rootIdentifier(node.expression);
  return undefined;
}

function commentOf(property: ts.PropertyAssignment, text: string): string {
  const leading = ts.getLeadingCommentRanges(text, property.getFullStart()) ?? [];
  const blocks = leading.map((range) => text.slice(range.pos, range.end)).filter((comment) => comment.startsWith('/**'));
  const block = blocks.at(-1);
  if (block) return block.replace(/^\/\*\*|\*\/$/g, '').split('\n').map((line) => line.replace(/^\s*\* ?/, '').trim()).filter(Boolean).join(' ');
  // A line comment after the key, on its line (after the comma that ends it).
  const lineEnd = text.indexOf('\n', property.getEnd());
  const rest = text.slice(property.getEnd(), lineEnd === -1 ? undefined : lineEnd);
  const line = /^,?\s*\/\/\s?(.*)$/.exec(rest);
  return line ? (line[1] as string).trim() : '';
}

function keysOf(literal: ts.ObjectLiteralExpression, text: string): Map<string, SchemaKey> {
  const keys = new Map<string, SchemaKey>();
  for (const property of literal.properties) {
    if (!ts.isPropertyAssignment(property)) continue;
    const name = property.name.getText().replace(/^['"]|['"]$/g, '');
    const inline = objectSchemaLiteral(property.initializer);
    const root = rootIdentifier(property.initializer);
    keys.set(name, {
      comment: commentOf(property, text),
      ...(inline ? { inline: keysOf(inline, text) } : {}),
      ...(!inline && root && root !== 'z' ? { refersTo: root } : {}),
    });
  }
  return keys;
}

/** Every schema constant of these files (`const xSchema = z.strictObject({...})`), by name, with its keys. */
function schemaConstants(files: readonly string[]): Map<string, Map<string, SchemaKey>> {
  const constants = new Map<string, Map<string, SchemaKey>>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    source.forEachChild(function visit(node) {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
        const literal = objectSchemaLiteral(node.initializer);
        if (literal) constants.set(node.name.text, keysOf(literal, text));
      }
      node.forEachChild(visit);
    });
  }
  return constants;
}

/** The comment of every key under `root`, by dotted path (`batch.max_file_bytes`). */
export function schemaComments(files: readonly string[], root: string): Map<string, string> {
  const constants = schemaConstants(files);
  const comments = new Map<string, string>();
  const walk = (keys: Map<string, SchemaKey>, prefix: string, seen: ReadonlySet<string>): void => {
    for (const [name, key] of keys) {
      const path = prefix ? `${prefix}.${name}` : name;
      if (key.comment) comments.set(path, key.comment);
      const nested = key.inline ?? (key.refersTo && !seen.has(key.refersTo) ? constants.get(key.refersTo) : undefined);
      if (nested) walk(nested, path, key.refersTo ? new Set([...seen, key.refersTo]) : seen);
    }
  };
  walk(constants.get(root) ?? new Map(), '', new Set([root]));
  return comments;
}
