/**
 * One browser of the console's HTTP tests: its cookies, and the CSRF token of
 * the last page it read. Cookies are sent by hand (no SameSite, no origin), as
 * a forged request would send them; `headers` adds any others (X-Forwarded-For).
 */
export class Visitor {
  readonly cookies = new Map<string, string>();
  token = '';
  constructor(private readonly base: string, readonly headers: Record<string, string> = {}) {}

  /** The Cookie header this visitor sends. */
  cookieHeader(): string {
    return [...this.cookies.entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(path: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<{ status: number; text: string; headers: Headers }> {
    const response = await fetch(`${this.base}${path}`, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        ...this.headers,
        cookie: this.cookieHeader(),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, ...value] = (pair as string).split('=');
      this.cookies.set(name as string, value.join('='));
    }
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (token) this.token = token;
    return { status: response.status, text, headers: response.headers };
  }

  post(path: string, form: Record<string, string>): ReturnType<Visitor['request']> {
    return this.request(path, { method: 'POST', form });
  }

  async signIn(name: string, code: string): Promise<{ status: number; headers: Headers }> {
    await this.request('/login');
    return this.post('/login', { _csrf: this.token, name, code });
  }
}
