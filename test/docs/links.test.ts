/**
 * The documentation's links hold: in README.md and every docs/*.md, each
 * relative link `[text](path)` or `[text](path#anchor)` names a file that
 * exists, and each anchor (in the same file or another .md) names a heading of
 * its target, by GitHub's rule. The README was split into docs/ by hand, and a
 * moved section leaves behind links that GitHub renders without complaint and
 * that lead nowhere. External links (http, https, mailto) are not fetched.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** README.md and every docs/*.md, as paths from the repository's root. */
function documents(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

/** The text outside fenced code blocks, each line kept in place so that line numbers still count. */
function proseLines(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const opener = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== null) {
      if (opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length) fence = null;
      return '';
    }
    if (opener !== undefined) {
      fence = opener;
      return '';
    }
    return line;
  });
}

/** GitHub's anchor for a heading: lower-case, punctuation dropped but `-` and `_`, each space a `-`. */
function anchorOf(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '').replace(/ /g, '-');
}

/** Every anchor a file's headings give, a repeated one as GitHub numbers it (`name-1`, `name-2`). */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const anchor = anchorOf(heading);
    const count = seen.get(anchor) ?? 0;
    seen.set(anchor, count + 1);
    anchors.add(count === 0 ? anchor : `${anchor}-${count}`);
  }
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** The inline links of a file, outside code blocks and code spans. */
function linksOf(file: string, text: string): Link[] {
  const links: Link[] = [];
  proseLines(text).forEach((line, index) => {
    const prose = line.replace(/(`+)[^`]*?\1/g, '');
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ file, line: index + 1, target: match[1] ?? '' });
    }
  });
  return links;
}

/** Why a link leads nowhere, or null when it holds. */
function problemOf(link: Link, anchorsByFile: (path: string) => Set<string>): string | null {
  if (/^(https?|mailto):/i.test(link.target)) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) return `an unexpected scheme (${link.target})`;
  const hash = link.target.indexOf('#');
  const path = decodeURIComponent(hash === -1 ? link.target : link.target.slice(0, hash));
  const anchor = hash === -1 ? null : decodeURIComponent(link.target.slice(hash + 1));
  const target = path === '' ? join(ROOT, link.file) : resolve(ROOT, dirname(link.file), path);
  const shown = relative(ROOT, target);
  if (relative(ROOT, target).startsWith('..')) return `${link.target} leads out of the repository`;
  if (!existsSync(target)) return `${shown} does not exist`;
  if (anchor === null) return null;
  if (!target.endsWith('.md')) return `#${anchor} points into ${shown}, which is not a Markdown file`;
  return anchorsByFile(target).has(anchor) ? null : `${shown} has no heading for #${anchor}`;
}

describe('the documentation links', () => {
  it('reads the anchors as GitHub makes them', () => {
    expect(anchorOf('The daemon (`paybatch watch`)')).toBe('the-daemon-paybatch-watch');
    expect(anchorOf('Senders and KYC [2.2], [3.3]')).toBe('senders-and-kyc-22-33');
    expect(anchorOf('The inbox: files whole or not at all')).toBe('the-inbox-files-whole-or-not-at-all');
    expect(anchorOf('`paybatch status [batch]`')).toBe('paybatch-status-batch');
    expect(anchorOf('max_row_amount per currency')).toBe('max_row_amount-per-currency');
    expect(anchorsOf('# A\n## A\n```\n# not a heading\n```\n### A\n')).toEqual(new Set(['a', 'a-1', 'a-2']));
  });

  it('finds a broken link, a missing file and a missing heading', () => {
    const links = linksOf('README.md', '[a](docs/none.md) [b](#nowhere) `[c](docs/in-code.md)` [d](https://example.com/x)\n```\n[e](fenced.md)\n```\n');
    expect(links.map((l) => l.target)).toEqual(['docs/none.md', '#nowhere', 'https://example.com/x']);
    const anchors = (): Set<string> => new Set(['paybatch']);
    expect(links.map((l) => problemOf(l, anchors))).toEqual(['docs/none.md does not exist', 'README.md has no heading for #nowhere', null]);
  });

  it('leads every relative link of README.md and docs/*.md to a file and a heading that exist', () => {
    const cache = new Map<string, Set<string>>();
    const anchorsByFile = (path: string): Set<string> => {
      let anchors = cache.get(path);
      if (anchors === undefined) {
        anchors = anchorsOf(readFileSync(path, 'utf8'));
        cache.set(path, anchors);
      }
      return anchors;
    };
    const files = documents();
    expect(files).toContain('docs/cli.md');
    let checked = 0;
    const broken: string[] = [];
    for (const file of files) {
      for (const link of linksOf(file, readFileSync(join(ROOT, file), 'utf8'))) {
        checked += 1;
        const problem = problemOf(link, anchorsByFile);
        if (problem !== null) broken.push(`${link.file}:${link.line}: (${link.target}) ${problem}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(broken, broken.join('\n')).toEqual([]);
  });
});
