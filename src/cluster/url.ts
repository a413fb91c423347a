// A PostgreSQL connection string as it may be shown: in a log line, an error or a file, the
// password never appears.

/**
 * postgres://user:secret@host:port/db?password=… → postgres://user:***@host:port/db?password=***.
 * A string that is not a URL (a malformed one may still hold a password) shows only its scheme.
 */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0];
    return scheme ? `${scheme}//(unreadable connection string)` : '(unreadable connection string)';
  }
  if (u.password) u.password = '***';
  for (const name of [...u.searchParams.keys()]) {
    if (/pass|secret|token|key/i.test(name)) u.searchParams.set(name, '***');
  }
  return u.toString();
}
