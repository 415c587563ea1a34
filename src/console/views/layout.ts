/**
 * The frame of every console page: header, navigation, the person signed in and
 * a sign-out form. Pure: data in, HTML out, every value escaped (format.ts).
 * Nothing is loaded from elsewhere: one stylesheet and one small script, both
 * served by the console itself.
 */
import { esc } from '../format.js';
import type { ConsoleRole } from '../roles.js';

export interface Viewer {
  person: string;
  role: ConsoleRole;
  /** The CSRF token every form of the page carries. */
  csrf: string;
  /** The console can act (cancel, approve) only where paybatch runs beside it: `watch`. */
  readOnly: boolean;
}

const NAV: readonly [string, string][] = [
  ['/', 'Batches'],
  ['/attention', 'Attention'],
  ['/approvals', 'Approvals'],
  ['/reconciliation', 'Reconciliation'],
  ['/audit', 'Audit'],
];

/** A hidden CSRF field: every form that changes anything carries it. */
export const csrfField = (viewer: Pick<Viewer, 'csrf'>): string => `<input type="hidden" name="_csrf" value="${esc(viewer.csrf)}">`;

export function page(opts: { title: string; viewer: Viewer | null; current?: string; body: string; live?: string }): string {
  const { title, viewer, current, body } = opts;
  const nav = viewer
    ? `<nav aria-label="Pages"><ul>${NAV.map(([href, label]) => `<li><a href="${href}"${href === current ? ' aria-current="page"' : ''}>${label}</a></li>`).join('')}</ul>
      <form method="post" action="/logout" class="signout">${csrfField(viewer)}<span>${esc(viewer.person)} (${esc(viewer.role)}${viewer.readOnly ? ', read-only console' : ''})</span> <button type="submit">Sign out</button></form></nav>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · paybatch</title>
<link rel="stylesheet" href="/assets/console.css">
<script src="/assets/console.js" defer></script>
</head>
<body${opts.live ? ` data-live="${esc(opts.live)}"` : ''}>
<a class="skip" href="#main">Skip to content</a>
<header><strong class="brand">paybatch</strong>${nav}</header>
<main id="main" tabindex="-1">
<h1>${esc(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

/**
 * A table; on a narrow screen (console.css) each row is drawn as a card, each
 * cell under its column's name (data-label), so that nothing is cut or
 * scrolled sideways on a phone. A column without a name (an action) shows its
 * cell alone.
 */
export function table(headers: readonly string[], rows: readonly string[][], caption?: string): string {
  if (rows.length === 0) return '<p class="empty">Nothing here.</p>';
  const cell = (c: string, i: number): string => {
    const label = headers[i] ?? '';
    return `<td role="cell"${label ? ` data-label="${esc(label)}"` : ''}>${c}</td>`;
  };
  // The roles keep a table a table to a screen reader when the cards' CSS draws its parts as blocks.
  return `<div class="scroll" tabindex="0" role="region"${caption ? ` aria-label="${esc(caption)}"` : ''}><table class="cards" role="table">${caption ? `<caption>${esc(caption)}</caption>` : ''}
<thead role="rowgroup"><tr role="row">${headers.map((h) => `<th scope="col" role="columnheader">${esc(h)}</th>`).join('')}</tr></thead>
<tbody role="rowgroup">${rows.map((cells) => `<tr role="row">${cells.map(cell).join('')}</tr>`).join('\n')}</tbody></table></div>`;
}

/** A message at the top of a page: the outcome of an action, or why it was refused. */
export const notice = (text: string, kind: 'ok' | 'error' = 'ok'): string => `<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${esc(text)}</p>`;
