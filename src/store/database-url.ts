/**
 * The database URL for people (its own module: showing one needs no database
 * driver loaded): scheme, user, host, port and database only. A
 * password (in the URL's user part or as ?password=) or any other query
 * parameter is never shown; a URL that does not read plainly is withheld.
 */
export const redactUrl = (url: string): string => {
  const withheld = 'the configured PostgreSQL database (URL withheld)';
  try {
    const parsed = new URL(url);
    if (!/^postgres(ql)?:$/.test(parsed.protocol) || !/^\/[A-Za-z0-9_.-]*$/.test(parsed.pathname) || parsed.hostname === '') return withheld;
    return `${parsed.protocol}//${parsed.username ? `${parsed.username}@` : ''}${parsed.host}${parsed.pathname}`;
  } catch {
    return withheld;
  }
};
