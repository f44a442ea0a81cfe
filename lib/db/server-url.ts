// Connection strings on a database server: the server's admin URL with
// another database in its path. The control plane makes project databases
// with it and push reads a project's credentials with it.

/** `serverUrl` (an admin role's URL) pointed at `database` on the same server. */
export function adminUrlFor(serverUrl: string, database: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  return url.toString()
}
