/** A minimal router: a path pattern with `:params`, per method; tells 404 from 405. */
export type Params = Record<string, string>;

interface Route<H> {
  method: string;
  pattern: RegExp;
  handler: H;
}

export type RouteMatch<H> = { kind: 'found'; handler: H; params: Params } | { kind: 'no-path' } | { kind: 'no-method'; allow: string[] };

export class Router<H> {
  private readonly routes: Route<H>[] = [];

  on(method: string, path: string, handler: H): this {
    const source = path.replace(/:([a-z_]+)/g, (_m, name: string) => `(?<${name}>[^/]+)`);
    this.routes.push({ method, pattern: new RegExp(`^${source}$`), handler });
    return this;
  }

  match(method: string, path: string): RouteMatch<H> {
    const onPath = this.routes.filter((route) => route.pattern.test(path));
    if (onPath.length === 0) return { kind: 'no-path' };
    const route = onPath.find((r) => r.method === method);
    if (!route) return { kind: 'no-method', allow: [...new Set(onPath.map((r) => r.method))] };
    const groups = route.pattern.exec(path)?.groups ?? {};
    const params = Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, decodeURIComponent(v)]));
    return { kind: 'found', handler: route.handler, params };
  }
}
