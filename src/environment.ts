/**
 * The environment as Shiri reads it, everywhere: the service's configuration (src/config.ts), the
 * carrier simulators' settings and the `shiri simulator` command (carriers/simulator/main.ts) each
 * read what this returns, never the raw `process.env`. A variable set to the empty string (as env
 * files and compose's `${VAR:-}` often leave them) counts as unset, so its default applies.
 */
export function presentEnv(given: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined && value !== ""));
}
