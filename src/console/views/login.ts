/** The sign-in page. Pure. */
import { esc } from '../format.js';
import { notice, page } from './layout.js';

export function loginPage(csrf: string, error?: string, name = ''): string {
  const body = `${error ? notice(error, 'error') : ''}
<p>Sign in with a one-time code: whoever runs paybatch gives you one with <code>paybatch console login YOUR-NAME</code>.</p>
<form method="post" action="/login" class="stack">
<input type="hidden" name="_csrf" value="${esc(csrf)}">
<label>Name <input name="name" autocomplete="username" required value="${esc(name)}" autofocus></label>
<label>One-time code <input name="code" autocomplete="one-time-code" required inputmode="text" spellcheck="false"></label>
<button type="submit">Sign in</button>
</form>`;
  return page({ title: 'Sign in', viewer: null, body });
}
